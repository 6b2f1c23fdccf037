import request from 'supertest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyUsageTracker } from '../../src/auth/key-usage.js';
import { createDb } from '../../src/db/knex.js';
import { parseKeyName } from '../../src/domain/key-name.js';
import { setApiKeyTier } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing, silentLogger, testRedis } from '../helpers/factory.js';
import {
  buildWebApp,
  createKeyInUi,
  csrfFrom,
  keyIdFrom,
  keyRow,
  nonceFrom,
  revokeInUi,
  signedInAgent,
  signUp,
} from './helpers.js';

let keyUsage: KeyUsageTracker;
const t = useTestContext({
  app: 'web',
  deps: (db) => {
    keyUsage = new KeyUsageTracker(db, silentLogger, 3_600_000); // flushed by hand below
    return { keyUsage };
  },
});

beforeAll(async () => {
  await insertListing(t.db);
});

const activeKeys = async (email: string) =>
  Number(
    (
      await t.db('api_keys as k')
        .join('accounts as a', 'a.id', 'k.account_id')
        .whereRaw('lower(a.email) = lower(?)', [email])
        .whereNull('k.revoked_at')
        .count<{ n: number }[]>('* as n')
    )[0].n,
  );

describe('creating a key', () => {
  it('shows the new key once, with a copy button and a warning, and the key works at once', async () => {
    const { agent } = await signedInAgent(t.app, 'create');
    const { res, key } = await createKeyInUi(agent, 'CRM sync');
    expect(res).toHaveStatus(201);
    expect(res.headers['cache-control']).toBe('no-store, no-transform');
    expect(key).toMatch(/^lfk_[A-Za-z0-9_-]{43}$/);
    expect(res.text).toContain('this is the only time it is shown');
    expect(res.text).toMatch(/<button type="button" class="secondary" data-copy="new-key"[^>]*hidden>Copy<\/button>/);
    expect(res.text).toMatch(/<script src="\/web\/copy-key\.[0-9a-f]+\.js" defer><\/script>/);
    const script = /<script src="([^"]+)"/.exec(res.text)![1];
    const js = await request(t.app).get(script);
    expect(js).toHaveStatus(200);
    expect(js.headers['content-type']).toMatch(/javascript/);

    // The listing: name, tier, prefix…last4, created, last used, today's requests and what remains.
    const row = keyRow(res.text, 'CRM sync');
    expect(row).toContain('<span class="tier">Free</span>');
    expect(row).toContain(`<code>${key!.slice(0, 8)}…${key!.slice(-4)}</code>`);
    expect(row).toMatch(/data-label="Created"><time datetime="\d{4}-\d\d-\d\dT/);
    expect(row).toContain('data-label="Last used"><span class="muted">never</span>');
    expect(row).toContain('data-label="Requests today" class="num">0</td>');
    expect(row).toContain('data-label="Remaining today" class="num">100 of 100</td>');

    const api = await request(t.app).get('/api/v1/listings').set(bearer(key!));
    expect(api).toHaveStatus(200);

    // Reloading the page does not show it again, and the plaintext is stored nowhere.
    const again = await agent.get('/api-keys');
    expect(again.text).not.toContain(key!);
    expect(again.text).toContain('CRM sync');
    const sessions = await t.db('web_sessions').select(t.db.raw('sess::text as s'));
    expect(sessions.some((r: { s: string }) => r.s.includes(key!))).toBe(false);
  });

  it('a second post of the same form (a reload of the POST) creates and shows nothing', async () => {
    const { agent, email } = await signedInAgent(t.app, 'reload');
    const page = await agent.get('/api-keys');
    const form = { _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'once' };
    const first = await agent.post('/api-keys/keys').type('form').send(form);
    expect(first).toHaveStatus(201);
    const second = await agent.post('/api-keys/keys').type('form').send(form);
    expect(second).toHaveStatus(303);
    expect(second.headers.location).toBe('/api-keys');
    expect(await activeKeys(email)).toBe(1);
    const after = await agent.get('/api-keys');
    expect(after.text).toContain('no new key was made');
    expect(after.text).not.toMatch(/<code id="new-key">/);
  });

  // An outside probe: every showing of the page (another tab, a revocation's redirect) made the
  // form of the pages shown before refused, said to be "already sent".
  it('a form stays usable while the page is shown again elsewhere; once used, its other copies make nothing', async () => {
    const { agent, email } = await signedInAgent(t.app, 'tabs');
    const tabA = await agent.get('/api-keys');
    const tabB = await agent.get('/api-keys');
    expect(await agent.head('/api-keys')).toHaveStatus(200);
    const fromA = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(tabA.text), nonce: nonceFrom(tabA.text), name: 'from tab A' });
    expect(fromA).toHaveStatus(201);
    const fromB = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(tabB.text), nonce: nonceFrom(tabB.text), name: 'from tab B' });
    expect(fromB).toHaveStatus(303);
    expect(await activeKeys(email)).toBe(1);
    expect((await agent.get('/api-keys')).text).toContain('no new key was made');
    // The page shown after a key was made has a form of its own.
    await createKeyInUi(agent, 'after');
    expect(await activeKeys(email)).toBe(2);
  });

  // An outside probe: the same form sent twice at once (a double click) made two keys.
  it('the same form sent several times at once makes one key', async () => {
    const { agent, email } = await signedInAgent(t.app, 'double-click');
    const page = await agent.get('/api-keys');
    const form = { _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'double click' };
    const answers = await Promise.all(Array.from({ length: 4 }, () => agent.post('/api-keys/keys').type('form').send(form)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 303, 303, 303]);
    expect(await activeKeys(email)).toBe(1);
  });

  // A hostile probe of stop 46: a form without its nonce was told it had "already been sent".
  it('a form without its nonce makes no key and says it was incomplete', async () => {
    const { agent, email } = await signedInAgent(t.app, 'no-nonce');
    const page = await agent.get('/api-keys');
    const sent = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(page.text), name: 'no nonce' });
    expect(sent).toHaveStatus(303);
    const after = await agent.get('/api-keys');
    expect(after.text).toContain('That form was incomplete');
    expect(after.text).not.toContain('already been sent');
    expect(await activeKeys(email)).toBe(0);
    // The page's own form still works.
    expect(await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(after.text), nonce: nonceFrom(after.text), name: 'with nonce' })).toHaveStatus(201);
  });

  // An outside probe: a key asked for while the database was stalled got the 503 page, and the
  // same form sent again once it was back said it "had already been sent" and made nothing.
  it('a form whose key could not be made (database unavailable) makes it when sent again', async () => {
    const db = createDb(t.url, { statementTimeoutMs: 300 });
    try {
      const app = await buildWebApp(db, { keyUsage });
      const { agent, email } = await signedInAgent(app, 'retry');
      const page = await agent.get('/api-keys');
      const form = { _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'after the outage' };
      // The keys' table held by another transaction: the insert runs past its statement timeout.
      const lock = await t.db.transaction();
      try {
        await lock.raw('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
        const failed = await agent.post('/api-keys/keys').type('form').send(form);
        expect(failed).toHaveStatus(503);
      } finally {
        await lock.rollback();
      }
      expect(await activeKeys(email)).toBe(0);
      const again = await agent.post('/api-keys/keys').type('form').send(form);
      expect(again).toHaveStatus(201);
      expect(again.text).toMatch(/<code id="new-key">lfk_/);
      expect(await activeKeys(email)).toBe(1);
      // And the form is used now.
      expect(await agent.post('/api-keys/keys').type('form').send(form)).toHaveStatus(303);
      expect(await activeKeys(email)).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  // An outside probe of stop 49: a sign-up answered 503 (a stalled database) whose INSERT then
  // committed had made the account, and the page said only "try again".
  it('a sign-up answered 503 says the account may have been made, and to try signing in', async () => {
    const db = createDb(t.url, { statementTimeoutMs: 300 });
    try {
      const app = await buildWebApp(db, { keyUsage });
      const agent = request.agent(app);
      const lock = await t.db.transaction();
      try {
        await lock.raw('LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE');
        const failed = await signUp(agent, `stalled-${Date.now()}@example.lu`);
        expect(failed).toHaveStatus(503);
        expect(failed.text).toContain('Your account may have been made all the same: try signing in');
      } finally {
        await lock.rollback();
      }
    } finally {
      await db.destroy();
    }
  });

  // An outside probe (stop 38): a session that could not be read (the sessions' table held
  // past the statement timeout) was deleted as the 503 ended, signing the user out, and the form
  // sent again once the database was back was refused as expired.
  it('a session that could not be read stays: the page is 503, then signed in again, and the form sent again makes the key', async () => {
    const db = createDb(t.url, { statementTimeoutMs: 300 });
    try {
      const app = await buildWebApp(db, { keyUsage });
      const { agent, email } = await signedInAgent(app, 'session-outage');
      const page = await agent.get('/api-keys');
      const form = { _csrf: csrfFrom(page.text), nonce: nonceFrom(page.text), name: 'after the session outage' };
      const sessions = async () => Number((await t.db('web_sessions').count<{ n: number }[]>('* as n'))[0].n);
      const before = await sessions();
      // The read held until it times out, and the table free again right after: whatever the
      // request then does to the session (the old code deleted it) goes through.
      const reading = async () =>
        Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE query ILIKE 'select sess%web_sessions%' AND wait_event_type = 'Lock'`)).rows[0].n);
      for (const send of [() => agent.get('/api-keys'), () => agent.post('/api-keys/keys').type('form').send(form)]) {
        const lock = await t.db.transaction();
        let answer: Promise<request.Response>;
        try {
          await lock.raw('LOCK TABLE web_sessions IN ACCESS EXCLUSIVE MODE');
          answer = send().then((r) => r);
          await vi.waitFor(async () => expect(await reading()).toBe(1), { timeout: 10_000, interval: 5 });
          await vi.waitFor(async () => expect(await reading()).toBe(0), { timeout: 10_000, interval: 5 });
        } finally {
          await lock.rollback();
        }
        expect(await answer!).toHaveStatus(503);
        expect(await sessions()).toBe(before);
      }
      const again = await agent.post('/api-keys/keys').type('form').send(form);
      expect(again).toHaveStatus(201);
      expect(await activeKeys(email)).toBe(1);
      const back = await agent.get('/api-keys');
      expect(back).toHaveStatus(200);
      expect(back.text).toContain(email);
    } finally {
      await db.destroy();
    }
  });

  it('needs a name, shown as an error next to the field; names are escaped', async () => {
    const { agent, email } = await signedInAgent(t.app, 'names');
    let { res } = await createKeyInUi(agent, '   ');
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/<p class="field-error" id="create-name-error">Give the key a name\.<\/p>/);
    ({ res } = await createKeyInUi(agent, '<img src=x onerror=alert(1)>'));
    expect(res).toHaveStatus(201);
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(await activeKeys(email)).toBe(1);
    // A text-direction override would make the name read as another (an outside probe).
    ({ res } = await createKeyInUi(agent, 'prod \u202egnitset'));
    expect(res).toHaveStatus(400);
    expect(res.text).toContain('no control or text-direction characters');
    // Nor a name that shows nothing (an outside probe: U+200B made a blank name in the table).
    for (const invisible of ['\u200b', '\ufeff', '\u3164 \u2800', '\u200d\u2060', '\u0301', '\u0301\u0308', '\u20dd', '\u2061', '\u206a', '\ufe0f', '\u{e0041}', '\ufff9', 'key\u061cname']) {
      ({ res } = await createKeyInUi(agent, invisible));
      expect(res).toHaveStatus(400);
    }
    expect(await activeKeys(email)).toBe(1);
    // What shows: emoji with their joiners, accents, other scripts; 60 characters as people
    // count them (31 emoji are 62 UTF-16 units).
    for (const visible of ['👨\u200d👩\u200d👧 family', 'Café e\u0301', '日本語のキー مفتاح', '🔑'.repeat(31)]) {
      ({ res } = await createKeyInUi(agent, visible));
      expect(res, visible).toHaveStatus(201);
    }
    expect(await activeKeys(email)).toBe(5);
    // Stored composed (NFC): "e" + U+0301 is the "é" of another keyboard.
    expect((await t.db('api_keys').join('accounts', 'accounts.id', 'api_keys.account_id').where('accounts.email', email).pluck('api_keys.name'))).toContain('Café é');
  });

  // An outside probe: 31 "é" typed as e + U+0301 were refused as over 60 characters, and the
  // field's maxlength (UTF-16 units) stopped a browser at 30 emoji.
  it('counts a name in characters as people see them, and the field does not cut it shorter', async () => {
    const { agent } = await signedInAgent(t.app, 'graphemes');
    const page = await agent.get('/api-keys');
    expect(page.text).toMatch(/name="name"(?![^>]*maxlength)[^>]*>/);
    expect(page.text).toContain('at most 60 characters');
    // 13 families of three (18 bytes each) are 234 bytes: more are refused by the byte bound below.
    for (const [name, status] of [['e\u0301'.repeat(60), 201], ['👨\u200d👩\u200d👧'.repeat(13), 201], ['👨\u200d👩\u200d👧'.repeat(61), 400], ['x'.repeat(61), 400]] as const) {
      const { res } = await createKeyInUi(agent, name);
      expect(res, name).toHaveStatus(status);
      if (status === 400) expect(res.text).toContain('Use at most 60 characters.');
    }
  });

  // An outside probe of stop 47: 'Z' and 1,200 combining acute accents are one character as
  // people count them, and 2.4 KB: the name was accepted. At most 480 code points as well (its
  // regression probes: not 240 bytes, which refused 56 characters of Devanagari, nor 240 code points).
  it('refuses a name of more than 480 code points, however few characters it shows; 60 characters of scripts of several each are kept', async () => {
    const { agent } = await signedInAgent(t.app, 'bytes');
    const stacked = 'Z' + '\u0301'.repeat(1200);
    for (const name of [stacked, 'q\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301'.repeat(60)]) {
      const { res, key } = await createKeyInUi(agent, name);
      expect(res, name.slice(0, 20)).toHaveStatus(400);
      expect(key).toBeNull();
      expect(res.text).toContain('This name is built of more than 480 Unicode code points');
    }
    // 60 characters of 4 bytes each, a name in Devanagari (56 characters, 94 code points, 258
    // bytes), 60 family emoji (420 code points), 60 conjuncts स्त्री (360): within both bounds.
    for (const name of ['𝒜'.repeat(60), 'संपत्ति सूची समन्वयन कुंजी मुंबई कार्यालय उत्पादन परिवेश दिल्ली हैदराबाद बेंगलुरु पुणे कोलकाता', '👨\u200d👩\u200d👧\u200d👦'.repeat(60), 'स्त्री'.repeat(60)]) {
      expect((await createKeyInUi(agent, name)).res, name.slice(0, 20)).toHaveStatus(201);
    }
    expect(parseKeyName(stacked)).toEqual({ ok: false, problem: 'too_many_code_points' });
    expect(parseKeyName('é'.repeat(120))).toEqual({ ok: false, problem: 'too_long' });
    expect(parseKeyName(' a  é ')).toEqual({ ok: true, name: 'a é' });
  });

  it('allows at most 5 active keys, with a clear message; revoking one makes room', async () => {
    const { agent, email } = await signedInAgent(t.app, 'max');
    for (let i = 1; i <= 5; i++) expect((await createKeyInUi(agent, `key ${i}`)).res).toHaveStatus(201);
    const full = await agent.get('/api-keys');
    expect(full.text).toContain('You have 5 active keys, the most an account can have');
    expect(full.text).not.toContain('action="/api-keys/keys"');

    // A made-up post without the page's single-use form: nothing is created.
    const sixth = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(full.text), nonce: '', name: 'six' });
    expect(sixth).toHaveStatus(303);
    expect(await activeKeys(email)).toBe(5);

    const stale = await agent.get('/api-keys');
    expect(await revokeInUi(agent, keyIdFrom(stale.text, 'key 3'))).toHaveStatus(303);
    expect((await createKeyInUi(agent, 'key 6')).res).toHaveStatus(201);
    expect(await activeKeys(email)).toBe(5);
  });

  it('refuses the sixth key on the server even when the form was open before the limit', async () => {
    const { agent, email } = await signedInAgent(t.app, 'race');
    for (let i = 1; i <= 4; i++) await createKeyInUi(agent, `key ${i}`);
    const page = await agent.get('/api-keys'); // form still offered: 4 active
    const token = csrfFrom(page.text);
    const nonce = nonceFrom(page.text);
    // Meanwhile a fifth key is made in another tab of the same session...
    await t.db('api_keys').insert({
      id: 'key_00000000000000aa',
      account_id: (await t.db('accounts').where({ email }).first()).id,
      name: 'other tab',
      tier: 'free',
      prefix: 'lfk_test',
      last4: 'abcd',
      key_hash: 'a'.repeat(64),
    });
    const res = await agent.post('/api-keys/keys').type('form').send({ _csrf: token, nonce, name: 'sixth' });
    expect(res).toHaveStatus(400);
    expect(res.text).toMatch(/id="create-name-error">You already have 5 active keys, the most an account can have/);
    expect(await activeKeys(email)).toBe(5);
  });

  // A quota counts per key: revoking a used-up Free key and creating another gave an account
  // any number of quotas a day (an outside probe: 800 Free requests in 9 s from one account).
  it('allows at most 10 Free keys created in a UTC day, revoked ones included; the page says so; the next day makes room', async () => {
    const { agent, email } = await signedInAgent(t.app, 'rotate');
    const account = await t.db('accounts').where({ email }).first();
    // Keys the team makes with the admin command line on other tiers do not count.
    await t.db('api_keys').insert({ id: 'key_00000000000000bb', account_id: account.id, name: 'team', tier: 'pro', prefix: 'lfk_test', last4: 'bbbb', key_hash: 'b'.repeat(64), revoked_at: new Date() });
    const names: string[] = [];
    for (let i = 1; i <= 9; i++) {
      if (i > 5) expect(await revokeInUi(agent, keyIdFrom((await agent.get('/api-keys')).text, names[i - 6]))).toHaveStatus(303);
      names.push(`key ${i}`);
      expect((await createKeyInUi(agent, `key ${i}`)).res, `key ${i}`).toHaveStatus(201);
    }
    expect(await revokeInUi(agent, keyIdFrom((await agent.get('/api-keys')).text, 'key 5'))).toHaveStatus(303);
    // A form open at 9 created and 4 active; a tenth made meanwhile (another tab, since revoked).
    const open = await agent.get('/api-keys');
    await t.db('api_keys').insert({ id: 'key_00000000000000cc', account_id: account.id, name: 'other tab', tier: 'free', prefix: 'lfk_test', last4: 'cccc', key_hash: 'c'.repeat(64), revoked_at: new Date() });
    const eleventh = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(open.text), nonce: nonceFrom(open.text), name: 'key 11' });
    expect(eleventh).toHaveStatus(400);
    expect(eleventh.text).toMatch(/id="create-name-error">10 keys were created for your account today, the most in a UTC day \(revoked keys count\)/);
    // The page says so before a form is sent, and offers none.
    const page = await agent.get('/api-keys');
    expect(page.text).toContain('10 keys were created for your account today, the most in a UTC day (revoked keys count)');
    expect(page.text).not.toContain('action="/api-keys/keys"');
    expect(await activeKeys(email)).toBe(4);

    // Made before 00:00 UTC, they no longer count.
    await t.db('api_keys').where({ account_id: account.id }).update({ created_at: t.db.raw(`created_at - interval '1 day'`) });
    expect((await createKeyInUi(agent, 'key 11')).res).toHaveStatus(201);
    expect(await activeKeys(email)).toBe(5);
  });

  it('sends a signed-out visitor to the sign-in page', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get('/api-keys');
    const res = await agent.post('/api-keys/keys').type('form').send({ _csrf: csrfFrom(page.text), name: 'x', nonce: 'x' });
    expect(res).toHaveStatus(303);
    expect((await agent.get(res.headers.location)).text).toContain('Please sign in first.');
  });
});

describe('revoking a key', () => {
  it('asks for confirmation, then the key gets 401 on the API at once', async () => {
    const { agent } = await signedInAgent(t.app, 'revoke');
    const { key } = await createKeyInUi(agent, 'to revoke');
    expect(await request(t.app).get('/api/v1/listings').set(bearer(key!))).toHaveStatus(200);
    const id = keyIdFrom((await agent.get('/api-keys')).text, 'to revoke');

    const confirm = await agent.get(`/api-keys/keys/${id}/revoke`);
    expect(confirm).toHaveStatus(200);
    expect(confirm.text).toContain('Revoke the key “to revoke”?');
    expect(confirm.text).toContain(`<form method="post" action="/api-keys/keys/${id}/revoke"`);
    expect(await request(t.app).get('/api/v1/listings').set(bearer(key!))).toHaveStatus(200); // not yet

    const res = await revokeInUi(agent, id);
    expect(res).toHaveStatus(303);
    const api = await request(t.app).get('/api/v1/listings').set(bearer(key!));
    expect(api).toHaveStatus(401);
    expect(api.body.code).toBe('invalid_key');

    const page = await agent.get('/api-keys');
    expect(page.text).toContain('is revoked: requests with it are refused from now on');
    expect(page.text).toContain('Revoked keys (1)');
    expect(await agent.get(`/api-keys/keys/${id}/revoke`)).toHaveStatus(303); // already revoked
  });

  it("another account's key can be neither seen nor revoked (404)", async () => {
    const owner = await signedInAgent(t.app, 'owner');
    const { key } = await createKeyInUi(owner.agent, 'owner secret key');
    const id = keyIdFrom((await owner.agent.get('/api-keys')).text, 'owner secret key');

    const intruder = await signedInAgent(t.app, 'intruder');
    const page = await intruder.agent.get('/api-keys');
    expect(page.text).not.toContain('owner secret key');
    expect(page.text).not.toContain(id);
    expect(page.text).not.toContain(key!.slice(-4) + '</code>');

    const get = await intruder.agent.get(`/api-keys/keys/${id}/revoke`);
    expect(get).toHaveStatus(404);
    expect(get.headers['content-type']).toMatch(/^text\/html/);
    expect(get.text).not.toContain('owner secret key');
    const post = await intruder.agent.post(`/api-keys/keys/${id}/revoke`).type('form').send({ _csrf: csrfFrom(page.text) });
    expect(post).toHaveStatus(404);
    expect((await t.db('api_keys').where({ id }).first()).revoked_at).toBeNull();
    expect(await request(t.app).get('/api/v1/listings').set(bearer(key!))).toHaveStatus(200);

    for (const bad of ['key_0000000000000000', 'nonsense', '%27%20OR%201%3D1']) {
      expect(await intruder.agent.get(`/api-keys/keys/${bad}/revoke`)).toHaveStatus(404);
    }
  });
});

describe("today's usage and last use", () => {
  it('counts requests today from the quota store; Pro keys show unlimited; last use appears after the batch write', async () => {
    const { agent } = await signedInAgent(t.app, 'usage');
    const { key } = await createKeyInUi(agent, 'counted');
    for (let i = 0; i < 3; i++) expect(await request(t.app).get('/api/v1/listings').set(bearer(key!))).toHaveStatus(200);
    await keyUsage.flush();
    let page = await agent.get('/api-keys');
    let row = keyRow(page.text, 'counted');
    expect(row).toContain('data-label="Requests today" class="num">3</td>');
    expect(row).toContain('data-label="Remaining today" class="num">97 of 100</td>');
    expect(row).toMatch(/data-label="Last used"><time datetime=/);

    await setApiKeyTier(t.db, keyIdFrom(page.text, 'counted'), 'pro');
    page = await agent.get('/api-keys');
    row = keyRow(page.text, 'counted');
    expect(row).toContain('<span class="tier">Pro</span>');
    expect(row).toContain('data-label="Remaining today" class="num">unlimited</td>');
  });

  // Issue 10, item 11: Redis answers a key that was never counted with nil, which the store
  // read as NaN ("NaN" and "NaN of 100" on the page).
  it('shows 0 requests and the whole quota for a key not used yet, with the Redis store', async () => {
    const redis = testRedis();
    const prefix = `lftest:usage:${Date.now().toString(36)}:`;
    try {
      const redisApp = await buildWebApp(t.db, { redis, redisPrefix: prefix });
      const { agent } = await signedInAgent(redisApp, 'unused');
      await createKeyInUi(agent, 'fresh');
      const row = keyRow((await agent.get('/api-keys')).text, 'fresh');
      expect(row).not.toContain('NaN');
      expect(row).toContain('data-label="Requests today" class="num">0</td>');
      expect(row).toContain('data-label="Remaining today" class="num">100 of 100</td>');
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
