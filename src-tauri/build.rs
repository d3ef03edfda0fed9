//! Tauri's build step (capabilities, icons, the app context), after checking that the UI has
//! been built: the app embeds `ui/dist`.

fn main() {
    // Read when the script runs, not when it is compiled: cargo may reuse a build script
    // compiled in another checkout that shares the target directory.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dist = std::path::Path::new(&manifest_dir).join("../ui/dist/index.html");
    println!("cargo:rerun-if-changed=../ui/dist");
    if !dist.is_file() {
        panic!(
            "{} is missing: build the UI first (`cargo xtask app`, or `npm --prefix ui ci && npm --prefix ui run build`)",
            dist.display()
        );
    }
    tauri_build::build()
}
