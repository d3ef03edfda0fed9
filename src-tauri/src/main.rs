//! The `judgelab-app` binary: the desktop window.

// No console window beside the app in Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    judgelab_app::run();
}
