// The namespaces of the transaction-level advisory locks the service takes (the first key of
// pg_advisory_xact_lock's two-key form), in one list so that no two uses share one.

// One import of a source at a time (second key: the source's name); src/ingest/locks.ts.
export const LOCK_SOURCE = 7301;
// The write phases of imports, one after the other (second key: '*'); src/ingest/locks.ts.
export const LOCK_WRITE = 7302;
// Held by the transaction of a running import (second key: its run's id);
// src/repositories/import-runs.ts.
export const LOCK_RUN = 7303;
// Market snapshots, one taker at a time (second key: 0); src/repositories/market-snapshots.ts.
export const LOCK_MARKET_SNAPSHOT = 7304;
