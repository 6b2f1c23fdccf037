import type { Knex } from 'knex';

// Every running instance keeps the data version and the keys it has verified in memory
// (src/db/listener.ts, src/auth/live-state.ts). PostgreSQL tells them when either changes:
// - the data version row itself notifies its new version on every update, whatever bumped it
//   (statement triggers on the listing tables, an importer, a change log): `lf_data_version`;
// - a key whose revocation or tier changes, or that is deleted, notifies its id: `lf_api_keys`.
// NOTIFY is delivered when the writing transaction commits, and never if it rolls back.
// last_used_at updates (every 30 s per instance) notify nothing.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lf_data_version', NEW.version::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER data_state_notify
    AFTER UPDATE ON data_state
    FOR EACH ROW WHEN (OLD.version IS DISTINCT FROM NEW.version) EXECUTE FUNCTION notify_data_version()`);
  await knex.raw(`
    CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('lf_api_keys', OLD.id);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER api_keys_notify_update
    AFTER UPDATE ON api_keys
    FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.tier IS DISTINCT FROM NEW.tier
                       OR OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.account_id IS DISTINCT FROM NEW.account_id)
    EXECUTE FUNCTION notify_api_key_change()`);
  await knex.raw(`
    CREATE TRIGGER api_keys_notify_delete
    AFTER DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER IF EXISTS api_keys_notify_delete ON api_keys`);
  await knex.raw(`DROP TRIGGER IF EXISTS api_keys_notify_update ON api_keys`);
  await knex.raw(`DROP FUNCTION IF EXISTS notify_api_key_change()`);
  await knex.raw(`DROP TRIGGER IF EXISTS data_state_notify ON data_state`);
  await knex.raw(`DROP FUNCTION IF EXISTS notify_data_version()`);
}
