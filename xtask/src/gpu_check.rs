//! `cargo xtask gpu check`: packs a CUDA build for the device check, `tools/gpu-check.sh`.
//!
//! The device tool sends the working tree and the carried paths, at most 64 MiB a call,
//! to a machine that has a GPU, CUDA 13's runtime and cuBLAS, and no network. What the
//! check needs beyond the tree (the stripped build and its llama.cpp libraries, the floor
//! tool linked to them, the default model: about 200 MB) is one xz archive cut into
//! chunks that fit beside the tree, one folder each: `.gpu-check/1`, `.gpu-check/2`, ….
//! Each call carries the next folder and runs the same script; a warm machine keeps what
//! earlier calls left, and the call that completes the set runs the check.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::gpu::{self, CudaBuild};
use crate::{project_root, run, sha256_file};

/// What one device call may send, working tree and carried files together.
const CALL_LIMIT: u64 = 64 << 20;
/// Room kept free in each call (files that appear in the tree before the call).
const MARGIN: u64 = 2 << 20;
/// Where the chunks go, git-ignored.
pub const PACK_DIR: &str = ".gpu-check";

/// `cargo xtask gpu check [--arch LIST]`: the CUDA build, packed.
pub fn main(args: &[String]) -> Result<()> {
    let options = gpu::Options::parse(args)?;
    if options.test {
        bail!("--test is for `gpu cuda`\n\n{}", gpu::USAGE);
    }
    pack(&gpu::cuda(&options.archs)?)
}

fn pack(build: &CudaBuild) -> Result<()> {
    let root = project_root();
    let model = crate::fetch_model_with(&build.dist.join("judgelab"))?;
    let staging = build.target.join("gpu-check");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)?;
    copy_dir(&build.dist, &staging.join("judgelab-cuda"))?;
    floor_tool(build, &staging.join("judgelab-cuda"))?;
    std::fs::copy(&model, staging.join(model.file_name().expect("a file")))?;
    let archive = build.target.join("gpu-check.tar.xz");
    eprintln!("compressing the build and the model for the device (about a minute)");
    run(Command::new("tar")
        .arg("-cJf")
        .arg(&archive)
        .arg("-C")
        .arg(&staging)
        .arg("."))?;
    let _ = std::fs::remove_dir_all(root.join(PACK_DIR));
    let tree = tree_size(&root)?;
    let room = CALL_LIMIT
        .checked_sub(tree + MARGIN)
        .filter(|room| *room >= 8 << 20)
        .with_context(|| {
            format!("the working tree is {tree} bytes: too little room beside it in a device call")
        })?;
    let sha = sha256_file(&archive)?;
    let size = std::fs::metadata(&archive)?.len();
    let chunks = chunk(&archive, &root.join(PACK_DIR), room, &sha)?;
    std::fs::remove_file(&archive)?;
    println!(
        "packed {size} bytes (sha256 {sha}) in {chunks} chunks of at most {room} bytes beside a working tree of {tree} bytes"
    );
    println!("device calls, one right after the other (a machine stays warm 30 s after a call):");
    for k in 1..=chunks {
        println!("  run  command: bash tools/gpu-check.sh   carry: [\"{PACK_DIR}/{k}\"]   timeout_s: 540");
    }
    println!("the last call runs the check (a few minutes); then give the machine back");
    Ok(())
}

/// Cuts `archive` into `dir/1/chunk`, `dir/2/chunk`, … of at most `room` bytes, each
/// folder with a manifest naming the set (`chunks N`, `sha256 S`).
pub fn chunk(archive: &Path, dir: &Path, room: u64, sha: &str) -> Result<usize> {
    use std::io::{Read, Write};
    let size = std::fs::metadata(archive)?.len();
    let chunks = size.div_ceil(room).max(1) as usize;
    let mut file = std::fs::File::open(archive)?;
    let mut buf = vec![0u8; 1 << 20];
    for k in 1..=chunks {
        let folder = dir.join(k.to_string());
        std::fs::create_dir_all(&folder)?;
        std::fs::write(
            folder.join("manifest"),
            format!("chunks {chunks}\nsha256 {sha}\n"),
        )?;
        let mut out = std::fs::File::create(folder.join("chunk"))?;
        let mut left = room;
        while left > 0 {
            let want = buf.len().min(left as usize);
            let n = file.read(&mut buf[..want])?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])?;
            left -= n as u64;
        }
    }
    Ok(chunks)
}

/// The bytes the device tool sends of the working tree: tracked files, and untracked
/// ones git does not ignore.
fn tree_size(root: &Path) -> Result<u64> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .context("while listing the working tree with git")?;
    if !out.status.success() {
        bail!("git ls-files failed: the device check is packed in a git checkout");
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            std::fs::symlink_metadata(root.join(String::from_utf8_lossy(p).as_ref())).ok()
        })
        .map(|m| m.len())
        .sum())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, dest)?;
        } else {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

/// `judgelab-floor` (`crates/llama/floor/floor.cpp`) compiled against the build's own
/// llama.cpp libraries: the same prefill loop on the same CUDA kernels, without
/// Judgelab, so that `judgelab bench` on the GPU has the floor of this build there.
fn floor_tool(build: &CudaBuild, dist: &Path) -> Result<PathBuf> {
    let source = project_root()
        .join("crates")
        .join("llama")
        .join("floor")
        .join("floor.cpp");
    let bin = dist.join("judgelab-floor");
    run(Command::new("c++")
        .args(["-O2", "-std=c++17"])
        .arg(&source)
        .arg("-I")
        .arg(build.llama_src.join("include"))
        .arg("-I")
        .arg(build.llama_src.join("ggml").join("include"))
        .arg("-L")
        .arg(dist)
        .args(["-lllama", "-lggml", "-lggml-base"])
        // As judgelab finds them: beside it, then in the toolkit it was built with.
        .arg(format!(
            "-Wl,--disable-new-dtags,-rpath,$ORIGIN:{lib},-rpath-link,{lib}",
            lib = build.toolkit.join("lib").display()
        ))
        .arg("-o")
        .arg(&bin))
    .context("while building the floor tool against the CUDA build")?;
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_is_cut_into_chunks_that_join_again() {
        let tmp = std::env::temp_dir().join(format!("xtask-chunks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let archive = tmp.join("a.tar.xz");
        let bytes: Vec<u8> = (0..2_500_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&archive, &bytes).unwrap();
        let n = chunk(&archive, &tmp.join("pack"), 1 << 20, "abc").unwrap();
        assert_eq!(n, 3);
        let mut joined = Vec::new();
        for k in 1..=n {
            let folder = tmp.join("pack").join(k.to_string());
            assert_eq!(
                std::fs::read_to_string(folder.join("manifest")).unwrap(),
                "chunks 3\nsha256 abc\n"
            );
            joined.extend(std::fs::read(folder.join("chunk")).unwrap());
        }
        assert_eq!(joined, bytes);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
