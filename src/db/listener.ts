import pg from 'pg';
import type { Logger } from 'pino';
import { TimeoutError, within } from '../lib/within.js';

// The channels the database notifies on (migrations/20261124000900_notify.ts).
export const DATA_VERSION_CHANNEL = 'lf_data_version';
export const API_KEYS_CHANNEL = 'lf_api_keys';
// Sent by the code that takes or deletes market snapshots (src/repositories/market-snapshots.ts),
// in the same transaction: the history's cached answers are keyed by the snapshots' version.
export const SNAPSHOTS_CHANNEL = 'lf_market_snapshots';

// What the listener reads on connecting and with every heartbeat.
export interface Versions {
  data: number;
  snapshots: number;
}

export interface ListenerHandlers {
  // LISTEN is in place and `version` was read after it: nothing committed since is missed.
  connected(versions: Versions): void;
  // The connection is gone (or a heartbeat failed): what was learnt through it may be stale.
  disconnected(): void;
  notification(channel: string, payload: string): void;
  // A heartbeat answered: the connection was alive when it was sent (`sentAt`, performance.now()).
  alive(sentAt: number, versions: Versions): void;
  // A heartbeat got no answer in time, and a new connection then answered at once: connections to
  // the database opened before `since` (Date.now() clock: when the heartbeat was sent) may be as
  // silent as the listener's was (a firewall or NAT that dropped open flows). Not when the new
  // connection is slow too: a slow link or a busy database answers late on every connection, and
  // new ones would cost their whole connect on top.
  silent?(since: number): void;
}

// How long the listener waits for an answer on its connection (the connect, LISTEN, each
// heartbeat) before it takes the connection for dead and replaces it. statement_timeout bounds a
// slow query on the server's side; this bounds a silent connection: a flow a firewall or NAT
// dropped, a primary gone without closing it (an outside probe froze the connection: no beat
// ever settled, the next ones were skipped as still running, and the process asked the database
// on every request for good, with nothing logged).
export const LISTENER_ANSWER_MS = 3000;

// One dedicated connection (outside the pool) that LISTENs for the database's notifications,
// proves it is alive with a tiny query every `heartbeatMs`, and reconnects with a capped
// back-off when it drops.
export class PgListener {
  private client: pg.Client | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private attempts = 0;
  private closed = false;
  private beating = false;
  // When the heartbeat that got no answer was sent (Date.now() clock), until the next connection
  // answers (silent) or fails.
  private silentSince: number | null = null;

  constructor(
    private readonly url: string,
    private readonly handlers: ListenerHandlers,
    private readonly logger: Logger,
    private readonly heartbeatMs = 250,
    private readonly answerMs = LISTENER_ANSWER_MS,
  ) {}

  start(): void {
    void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.drop(false);
  }

  private async connect(): Promise<void> {
    this.retry = null;
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'lux-listings-feed listener',
      keepAlive: true,
      statement_timeout: 2000,
      connectionTimeoutMillis: this.answerMs,
    });
    this.client = client;
    client.on('error', (err) => {
      if (this.client === client) {
        this.logger.warn({ err: err.message }, 'database listener lost its connection; reconnecting');
        this.drop(true);
      }
    });
    client.on('end', () => {
      if (this.client === client) this.drop(true);
    });
    client.on('notification', (n) => {
      if (this.client === client) this.handlers.notification(n.channel, n.payload ?? '');
    });
    try {
      await client.connect();
      await this.answered(client.query(`LISTEN ${DATA_VERSION_CHANNEL}; LISTEN ${API_KEYS_CHANNEL}; LISTEN ${SNAPSHOTS_CHANNEL}`));
      const versions = await this.answered(readVersions(client));
      if (this.client !== client || this.closed) return;
      if (this.attempts > 0) this.logger.info('database listener reconnected');
      if (this.silentSince !== null) this.handlers.silent?.(this.silentSince);
      this.silentSince = null;
      this.attempts = 0;
      this.handlers.connected(versions);
      this.heartbeat = setInterval(() => void this.beat(client), this.heartbeatMs);
      this.heartbeat.unref();
    } catch (err) {
      if (this.client !== client) return;
      this.silentSince = null;
      if (this.attempts === 0) this.logger.warn({ err: (err as Error).message }, 'database listener could not connect; retrying');
      this.drop(true);
    }
  }

  private async beat(client: pg.Client): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    const sentAt = performance.now();
    try {
      const versions = await this.answered(readVersions(client));
      if (this.client === client) this.handlers.alive(sentAt, versions);
    } catch (err) {
      if (this.client === client) {
        this.logger.warn({ err: (err as Error).message }, 'database listener heartbeat failed; reconnecting');
        if (err instanceof TimeoutError) this.silentSince = Date.now() - (performance.now() - sentAt);
        this.drop(true);
      }
    } finally {
      this.beating = false;
    }
  }

  // `query`'s result, or an error once the connection has said nothing for answerMs.
  private answered<T>(query: Promise<T>): Promise<T> {
    return within(query, this.answerMs, `no answer within ${this.answerMs} ms`);
  }

  private drop(reconnect: boolean): void {
    const client = this.client;
    this.client = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (client) {
      this.handlers.disconnected();
      client.removeAllListeners('notification');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      // A connection that stopped answering never ends by itself (end() waits on it): its socket
      // is closed here if it is still open a second later.
      const socket = (client as unknown as { connection?: { stream?: { destroyed?: boolean; destroy(): void } } }).connection?.stream;
      if (socket) setTimeout(() => socket.destroyed || socket.destroy(), 1000).unref();
    }
    if (reconnect && !this.closed && !this.retry) {
      const delay = Math.min(5000, 100 * 2 ** Math.min(this.attempts, 6));
      this.attempts++;
      this.retry = setTimeout(() => void this.connect(), delay);
      this.retry.unref();
    }
  }
}

async function readVersions(client: pg.Client): Promise<Versions> {
  const { rows } = await client.query<{ data: string | number | null; snapshots: string | number | null }>(
    'SELECT (SELECT version FROM data_state) AS data, (SELECT version FROM market_snapshot_state) AS snapshots',
  );
  return { data: Number(rows[0]?.data ?? 0), snapshots: Number(rows[0]?.snapshots ?? 0) };
}
