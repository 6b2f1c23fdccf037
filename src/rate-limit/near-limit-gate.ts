// Requests of a key near its daily quota, admitted to the quota store in turn in this process
// (an outside probe, hardening): a revalidation alone, plain requests together (stop 56).
//
// The store counts every request on arrival and takes back a 304 (and a 429) once it has
// been answered (src/http/quota.ts). So while revalidations of a key are in flight its count
// stands higher than it will end: with 2 requests left, 20 revalidations sent at once pushed
// it to 118, and the revalidations past the limit, and a plain GET sent with them, were told
// the key's quota was used up until midnight, though 304s cost nothing and the count ended
// at 98. Near the limit, where that matters, a key's revalidation waits for the requests
// before it to be decided, and the requests after it wait for it to be decided for good
// (answered, and taken back if a 304), so each is decided on the count as it ends. Plain
// requests do not wait for each other: their counts are final once the store has answered.
//
// "Near" is `near` requests left or fewer, as this process last saw the key's count, less the
// requests still being decided (a key it has not seen yet counts as near: its count is
// unknown). A key far from its limit is not held back, but its requests count against what is
// left until decided, so a burst is queued once it brings the key near; near, a revalidation
// waits for all of them, a plain request for the revalidations among them (stop 57). A key
// over its quota is refused from the quota's refusals (src/rate-limit/quota-refusals.ts)
// before it gets here, so it queues only for the one request a second that asks the store
// again. Other processes and instances count in the
// same store, unserialized: the gate covers one process's concurrent requests.
export const NEAR_LIMIT = 64;
// The longest a request holds the key's turn (src/http/quota.ts releases it once the
// request's count is final: at once for most, when its answer is known for a revalidation).
// A bound against an answer that never comes: past it the turn passes to the next request,
// and the key's requests go on in turn. The database's own bound, 12 s by default.
export const NEAR_LIMIT_MAX_HOLD_MS = 12_000;
// The longest a request waits in the key's queue (the 3 s a request may wait for its own count:
// docs/integrators.md). Behind a slow store, each revalidation holds the queue for a round trip
// and its answer: an outside probe of stop 56 had the 60th of a Free key's requests sent at once
// wait 15 s behind a Redis answering in 250 ms. Past it, the request goes to the store without
// its turn (the default of `expired`): counted exactly, though revalidations in flight may make
// the key look over its limit. Served without limiting instead, a key sending a few
// revalidations ahead of its plain requests was served past its quota again and again (the
// re-checks of stop 56).
export const NEAR_LIMIT_MAX_WAIT_MS = 3_000;

const noop = () => undefined;
type Admit = (release: () => void) => void;

interface Waiting {
  admit: Admit;
  exclusive: boolean;
  timer: NodeJS.Timeout;
}

interface KeyState {
  remaining: number | null;
  // Requests being decided that take the turn alone (revalidations, which may be taken back) and
  // that share it (plain requests, whose count is final once the store has answered: the store
  // counts atomically, so they need not wait for each other).
  exclusive: boolean;
  shared: number;
  // Requests admitted far from the limit and not decided yet: what the store last said is left
  // is that much less (the re-check of stop 56: a burst sent at 65 left went by unqueued, and its
  // revalidations got plain requests refused with requests left).
  undecided: number;
  // Of those, the revalidations (each may yet be taken back): a request that takes or shares the
  // turn waits for them, as for a revalidation holding it (the re-check of stop 57: two
  // revalidations admitted at 66 left, then 66 plain requests sharing the turn at once, 2 refused).
  farRevalidations: number;
  queue: Waiting[];
}

export interface EnterOptions {
  // Takes the turn alone (a revalidation, default) or shares it with other such requests (a
  // plain request: the re-check of stop 56 had each plain request wait for the round trip of the
  // one before it, and behind a slow store most were served without limiting).
  exclusive?: boolean;
  // Runs instead of `admit` once the request has waited maxWaitMs in the queue.
  expired?: () => void;
}

export class NearLimitGate {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly near = NEAR_LIMIT,
    private readonly maxKeys = 10_000,
    private readonly maxHoldMs = NEAR_LIMIT_MAX_HOLD_MS,
    private readonly maxWaitMs = NEAR_LIMIT_MAX_WAIT_MS,
  ) {}

  private state(keyId: string): KeyState {
    let s = this.keys.get(keyId);
    if (s === undefined) {
      // Keys at rest (none deciding, none queued) are dropped when the map is full.
      if (this.keys.size >= this.maxKeys) for (const [id, k] of this.keys) if (!k.exclusive && k.shared === 0 && k.undecided === 0 && k.queue.length === 0) this.keys.delete(id);
      s = { remaining: null, exclusive: false, shared: 0, undecided: 0, farRevalidations: 0, queue: [] };
      this.keys.set(keyId, s);
    }
    return s;
  }

  // Runs `admit` now, or, when the key is near its limit, once the requests before it allow:
  // a request that takes the turn alone waits for every request before it to be decided, and a
  // request that shares it waits only for those before it that take it alone. `admit` must call
  // the release it is given exactly once, when its request has been decided for good (a
  // revalidation: answered, and taken back if a 304) or has failed.
  enter(keyId: string, admit: Admit, opts: EnterOptions = {}): void {
    const exclusive = opts.exclusive ?? true;
    const s = this.state(keyId);
    if (this.far(s)) return this.admitFar(s, admit, exclusive);
    if (s.queue.length === 0 && this.free(s, exclusive)) return this.run(s, admit, exclusive);
    const expired = opts.expired ?? (() => admit(noop));
    const waiting: Waiting = {
      admit,
      exclusive,
      timer: setTimeout(() => {
        const i = s.queue.indexOf(waiting);
        if (i < 0) return;
        s.queue.splice(i, 1);
        expired();
        this.drain(s); // a request that took the turn alone no longer holds up those after it
      }, this.maxWaitMs),
    };
    waiting.timer.unref();
    s.queue.push(waiting);
  }

  private free(s: KeyState, exclusive: boolean): boolean {
    return exclusive ? !s.exclusive && s.shared === 0 && s.undecided === 0 : !s.exclusive && s.farRevalidations === 0;
  }

  // Far: more than `near` left once the requests still being decided are counted.
  private far(s: KeyState): boolean {
    return s.remaining !== null && s.remaining - s.undecided - s.shared - (s.exclusive ? 1 : 0) > this.near;
  }

  private run(s: KeyState, admit: Admit, exclusive: boolean): void {
    if (exclusive) s.exclusive = true;
    else s.shared++;
    let released = false;
    // The turn passes on after maxHoldMs, whether or not its request has been decided.
    const expiry = setTimeout(() => release(), this.maxHoldMs);
    expiry.unref();
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(expiry);
      if (exclusive) s.exclusive = false;
      else s.shared--;
      this.drain(s);
    };
    admit(release);
  }

  // Admitted without a turn, far from the limit: counted against what is left until decided.
  private admitFar(s: KeyState, admit: Admit, exclusive: boolean): void {
    s.undecided++;
    if (exclusive) s.farRevalidations++;
    let released = false;
    admit(() => {
      if (released) return;
      released = true;
      s.undecided--;
      if (exclusive) s.farRevalidations--;
      this.drain(s);
    });
  }

  // Starts what the queue's head allows.
  private drain(s: KeyState): void {
    // Far from the limit now (or the store is not answering): requests waiting go without a turn
    // while it stays far, each counted as it goes. Released whole, uncounted, a queue sent at 65
    // left had 4 plain requests refused with 9 left (the sixth re-check of stop 56).
    while (s.queue.length > 0 && this.far(s)) {
      const w = s.queue.shift()!;
      clearTimeout(w.timer);
      this.admitFar(s, w.admit, w.exclusive);
    }
    while (s.queue.length > 0 && this.free(s, s.queue[0].exclusive)) {
      const w = s.queue.shift()!;
      clearTimeout(w.timer);
      this.run(s, w.admit, w.exclusive);
    }
  }

  // What the store said is left of the key's quota (after its take-backs).
  saw(keyId: string, remaining: number): void {
    this.state(keyId).remaining = remaining;
  }

  // The store did not answer for the key (a request served without limiting): its requests
  // are not held back until it answers again, or each would wait out the one before it.
  unanswered(keyId: string): void {
    this.state(keyId).remaining = Number.POSITIVE_INFINITY;
  }

  // A request of the key was taken back from its count.
  tookBack(keyId: string): void {
    const s = this.keys.get(keyId);
    if (s?.remaining != null) s.remaining++;
  }

  get size(): number {
    return this.keys.size;
  }
}
