//! Integration tests of the desktop app: the generated bindings, and the real app driven end
//! to end through tauri-driver and WebKitWebDriver.

mod app;
mod bindings;
mod view;
mod webdriver;
