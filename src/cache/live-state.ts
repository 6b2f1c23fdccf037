import type { Logger } from 'pino';
import { API_KEYS_CHANNEL, DATA_VERSION_CHANNEL, PgListener, SNAPSHOTS_CHANNEL, type ListenerHandlers, type Versions } from '../db/listener.js';
import type { AuthenticatedKey } from '../repositories/api-keys.js';

// What this process knows without asking the database: the current data version, the market
// snapshots' version and the API keys it has verified (key hash -> key), kept true by the database's notifications
// (src/db/listener.ts). Both are trusted only while the listener is demonstrably connected:
// a heartbeat answered less than `maxStaleMs` ago. Otherwise every request asks the database
// as before, so a revocation is never ignored for longer than that, even when the listener's
// connection died silently.
// The event loop's lag is read every LAG_TICK_MS and remembered for LAG_MEMORY_MS.
const LAG_TICK_MS = 100;
const LAG_MEMORY_MS = 2000;

export class LiveState implements ListenerHandlers {
  private version = 0;
  private snapshots = 0;
  private isConnected = false;
  private lastAlive = -Infinity;
  private keys = new Map<string, AuthenticatedKey>();
  private hashById = new Map<string, string>();
  // Bumped whenever a key may have changed: a lookup that started before it is not kept.
  private generation = 0;
  private listener: PgListener | null = null;
  // How late this process's own event loop ran lately (see fresh()).
  private lagTimer: NodeJS.Timeout | null = null;
  private lastTick = performance.now();
  private lagMs = 0;
  private lagSeenAt = -Infinity;
  private readyWaiters: Array<() => void> = [];
  private versionListeners: Array<(version: number) => void> = [];
  private keyListeners = new Set<(keyId: string) => void>();
  private silentListeners: Array<(since: number) => void> = [];

  constructor(
    private readonly maxStaleMs = 1000,
    private readonly maxKeys = 50_000,
  ) {}

  // Listens on the database at `url` (the primary: notifications come from where writes commit).
  start(url: string, logger: Logger, heartbeatMs = 250): this {
    this.listener = new PgListener(url, this, logger, heartbeatMs);
    this.listener.start();
    this.lastTick = performance.now();
    this.lagTimer = setInterval(() => {
      const now = performance.now();
      const lag = now - this.lastTick - LAG_TICK_MS;
      this.lastTick = now;
      if (lag > LAG_TICK_MS) {
        this.lagMs = lag;
        this.lagSeenAt = now;
      }
    }, LAG_TICK_MS);
    this.lagTimer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.lagTimer = null;
    await this.listener?.close();
    this.listener = null;
  }

  // True while what is held may be used: the last heartbeat answered less than `maxStaleMs`
  // ago, or that and as long as this process's own event loop was held up lately (within the
  // last 2 s). A loop held up by a burst of requests reads the heartbeat's answer late, and
  // so would it the database's answers: asking the database instead then adds only load (an
  // outside probe: 5,000 requests at once on /communes made every one of them look its key up
  // in PostgreSQL, and 4,903 of them were 503, the pool's connections all taken).
  fresh(): boolean {
    if (!this.isConnected) return false;
    const now = performance.now();
    const lag = now - this.lagSeenAt < LAG_MEMORY_MS ? this.lagMs : 0;
    return now - this.lastAlive < this.maxStaleMs + lag;
  }

  // The data version, when it can be trusted.
  currentVersion(): number | undefined {
    return this.fresh() ? this.version : undefined;
  }

  // The market snapshots' version (the history's cache key), when it can be trusted.
  currentSnapshotVersion(): number | undefined {
    return this.fresh() ? this.snapshots : undefined;
  }

  // The key with this hash, when verified and not changed since.
  key(hash: string): AuthenticatedKey | undefined {
    return this.fresh() ? this.keys.get(hash) : undefined;
  }

  // Call before a lookup; pass the token to remember() with its result.
  lookupToken(): number | null {
    return this.fresh() ? this.generation : null;
  }

  // Keeps an active key read from the database, unless a key changed (or the connection
  // dropped) since the lookup began: then its result may already be stale.
  remember(hash: string, key: AuthenticatedKey, token: number | null): void {
    if (token === null || token !== this.generation || !this.fresh()) return;
    if (this.keys.size >= this.maxKeys) this.forgetKeys();
    this.keys.set(hash, key);
    this.hashById.set(key.id, hash);
  }

  // Called with the id of every key that changed (revoked, given another tier, deleted), as its
  // notification comes; returns the call that stops it (an export under way: src/http/routes/changes.ts).
  onKeyChange(listener: (keyId: string) => void): () => void {
    this.keyListeners.add(listener);
    return () => void this.keyListeners.delete(listener);
  }

  // Called with every newer version seen (by the server: the read model starts its reload).
  onVersion(listener: (version: number) => void): void {
    this.versionListeners.push(listener);
  }

  // Resolves once connected, or false after `timeoutMs`.
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.isConnected) return true;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(this.isConnected);
      };
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.readyWaiters.push(done);
    });
  }

  // ListenerHandlers
  connected(versions: Versions): void {
    // Anything may have changed while disconnected: start over.
    this.forgetKeys();
    this.version = 0;
    this.seeVersion(versions.data);
    this.snapshots = versions.snapshots;
    this.lastAlive = performance.now();
    this.isConnected = true;
    for (const w of this.readyWaiters.splice(0)) w();
  }

  disconnected(): void {
    this.isConnected = false;
    this.forgetKeys();
  }

  silent(since: number): void {
    for (const l of this.silentListeners) l(since);
  }

  // Called when the listener's connection went silent, with when its unanswered heartbeat was
  // sent (Date.now() clock): the pool retires its connections opened before (server.ts).
  onSilentConnection(listener: (since: number) => void): void {
    this.silentListeners.push(listener);
  }

  alive(sentAt: number, versions: Versions): void {
    if (sentAt > this.lastAlive) this.lastAlive = sentAt;
    this.seeVersion(versions.data);
    this.seeSnapshots(versions.snapshots);
  }

  notification(channel: string, payload: string): void {
    if (channel === DATA_VERSION_CHANNEL) {
      const v = Number(payload);
      if (Number.isFinite(v)) this.seeVersion(v);
    } else if (channel === SNAPSHOTS_CHANNEL) {
      const v = Number(payload);
      if (Number.isFinite(v)) this.seeSnapshots(v);
    } else if (channel === API_KEYS_CHANNEL) {
      this.generation++;
      const hash = this.hashById.get(payload);
      if (hash !== undefined) {
        this.keys.delete(hash);
        this.hashById.delete(payload);
      }
      for (const l of this.keyListeners) l(payload);
    }
  }

  private seeVersion(v: number): void {
    // Versions only grow (migrations/20261122003000_data_version.ts).
    if (v <= this.version) return;
    this.version = v;
    for (const l of this.versionListeners) l(v);
  }

  // Also only grows (every take and delete adds one).
  private seeSnapshots(v: number): void {
    if (v > this.snapshots) this.snapshots = v;
  }

  private forgetKeys(): void {
    this.generation++;
    this.keys.clear();
    this.hashById.clear();
  }
}
