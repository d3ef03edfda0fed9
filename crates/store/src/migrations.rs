//! The schema's migrations, embedded by `build.rs` from `migrations/`, as the source sqlx's
//! migrator runs: the versions, descriptions and checksums `sqlx::migrate!` would give them.

use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// (version, description, SQL), by version.
const MIGRATIONS: &[(i64, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

#[derive(Debug)]
struct Embedded;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    let no_tx = sql.starts_with("-- no-transaction");
                    Migration::new(
                        version,
                        description.into(),
                        MigrationType::Simple,
                        sql.into(),
                        no_tx,
                    )
                })
                .collect())
        })
    }
}

/// The migrator that brings a database's schema up to date.
pub async fn migrator() -> Migrator {
    Migrator::new(Embedded)
        .await
        .expect("the embedded migrations resolve")
}
