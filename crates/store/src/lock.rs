//! One run of an experiment at a time, across processes: a run holds an OS lock on a file
//! beside the database (`<db>-runs/<experiment>.lock`) for as long as it goes on.
//!
//! The OS releases the lock when the process ends, however it ends, so a lock left by a
//! killed run never blocks the next one; the file itself stays (deleting it while another
//! process opens it would let two runs hold locks on two different files). What the file
//! says (the holder's process id) is only for the message.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use crate::{Store, StoreError};

/// Held while a run of one experiment goes on; dropping it lets the next run start.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    pub path: PathBuf,
}

impl Store {
    /// Takes the run lock of experiment `name`, or says who holds it
    /// ([`StoreError::Running`]).
    pub fn lock_run(&self, name: &str) -> Result<RunLock, StoreError> {
        let mut dir = self.path().as_os_str().to_owned();
        dir.push("-runs");
        let dir = PathBuf::from(dir);
        let path = dir.join(format!("{name}.lock"));
        let io = |source: std::io::Error| StoreError::Lock {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // On Windows a locked file cannot be read; the message then names no holder.
                let _ = file.read_to_string(&mut holder);
                return Err(StoreError::Running {
                    name: name.to_string(),
                    holder: holder.trim().to_string(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "process {}", std::process::id()))
            .and_then(|()| file.flush());
        written.map_err(io)?;
        Ok(RunLock { _file: file, path })
    }
}
