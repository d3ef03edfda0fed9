//! Tauri's build step (capabilities, icons, the app context), after checking that the UI has
//! been built: the app embeds `ui/dist`.

fn main() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist/index.html");
    println!("cargo:rerun-if-changed=../ui/dist");
    if !dist.is_file() {
        panic!(
            "{} is missing: build the UI first (`cargo xtask app`, or `npm --prefix ui ci && npm --prefix ui run build`)",
            dist.display()
        );
    }
    tauri_build::build()
}
