//! `judgelab info`: this build, the database, the default model and what local models
//! compute on.

use std::process::ExitCode;

use judgelab_store::Store;

pub fn command(store: &Store) -> ExitCode {
    let model = judgelab_engine::default_model_path();
    println!("judgelab {}", env!("CARGO_PKG_VERSION"));
    println!("database: {}", store.path().display());
    println!(
        "default model: {} ({})",
        model.display(),
        if model.is_file() {
            "present"
        } else {
            "missing: `judgelab fetch-model` fetches it, and so does the first command that needs it"
        }
    );
    println!(
        "local models: {}",
        judgelab_engine::local_compute().summary()
    );
    ExitCode::SUCCESS
}
