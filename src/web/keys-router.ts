import { randomBytes } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Store } from 'express-rate-limit';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { z } from 'zod';
import { KEY_ID_PATTERN } from '../auth/api-key.js';
import { normalizeEmail } from '../domain/email.js';
import { KEY_NAME_MAX_CHARS, KEY_NAME_MAX_CODE_POINTS, parseKeyName } from '../domain/key-name.js';
import { usageToday, utcDay } from '../rate-limit/quota-counters.js';
import { createAccount, findAccountByEmail, newAccountEmailProblem } from '../repositories/accounts.js';
import { createAccountKey, findAccountKey, listApiKeys, revokeAccountKey } from '../repositories/api-keys.js';
import { loadWebSecrets, takeCreateNonce } from '../repositories/web-sessions.js';
import { htmlErrorHandler, htmlNotFound } from './errors.js';
import { formBody } from './form-body.js';
import { refuseControlCharacters } from './input.js';
import { confirmRevokePage, dailyLimitReached, keyLabel, keysPage, MAX_ACTIVE_KEYS, MAX_KEYS_PER_DAY, networkLimitReached, signedOutPage, type FieldErrors, type KeysView, type SignedOutView } from './keys-pages.js';
import { csrfProtection } from './csrf.js';
import { onlyMethods } from './methods.js';
import type { WebOptions } from './options.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { endSession, SESSION_COOKIE, SESSION_PATH, sessionMiddleware, startSignedInSession } from './session.js';
import { freeKeysPerIp, signInThrottles, type ThrottleDeps } from './throttle.js';

export interface KeysRouterDeps extends ThrottleDeps {
  db: Knex;
  logger: Logger;
  clock: () => Date;
  baseUrl: string;
  secureCookie: boolean;
  quotaStore: Store;
  options: WebOptions;
}

const str = z.preprocess((v) => (typeof v === 'string' ? v : ''), z.string());
const emailSchema = z.string().trim().max(254, 'An email address has at most 254 characters.').pipe(z.email('Enter an email address like name@example.com.'));
const signInBody = z.object({ email: str, password: str });
const signUpBody = z.object({ email: str, password: str, password_repeat: str });
const createBody = z.object({ name: str, nonce: str });

const WRONG_CREDENTIALS = 'That email and password do not match an account. Check them and try again.';

// Notices for a visitor without a session travel in the address (?notice=…): keeping one in
// the session would create a session row for an anonymous request.
const SIGNED_OUT_NOTICES = new Map([['sign-in', 'Please sign in first.']]);

export function keysRouter(deps: KeysRouterDeps): Router {
  const r = Router();
  const throttles = signInThrottles(deps);
  const { perIp, perEmail } = throttles;
  const freeKeys = freeKeysPerIp(deps);
  // Loaded from the database once, on the first request that needs them.
  let secretsOnce: Promise<string[]> | null = null;
  const secrets = () =>
    (secretsOnce ??= loadWebSecrets(deps.db).catch((err) => {
      secretsOnce = null; // try again on the next request
      throw err;
    }));

  // The timing of a sign-in must not tell whether the email has an account: an unknown
  // email is checked against this hash, made once with the same cost.
  let dummyHash: Promise<string> | null = null;
  const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('hex'), deps.options.bcryptCost));

  // The session and CSRF cookies belong to /api-keys, and a cookie's path is matched letter
  // case and all (by browsers and by express-session): under /API-KEYS, which the router
  // matches too, a visitor has neither. A page asked for there is sent to its own address;
  // a form posted there is not found (an outside probe got a 500).
  r.use((req, res, next) => {
    if (req.originalUrl.startsWith(SESSION_PATH)) return next();
    if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(308, `${SESSION_PATH}${req.url.replace(/^\/(?=\?|$)/, '')}`);
    htmlNotFound(req, res, next);
  });

  // Pages with keys, tokens or account data are never stored by a browser or a proxy, nor
  // compressed (no-transform: the compression middleware skips them), so that a response
  // holding a secret cannot be probed through its compressed length (BREACH).
  r.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store, no-transform');
    next();
  });
  // A method an address does not serve: 405 (OPTIONS 204), before the body, the session and
  // the CSRF check are looked at (a PUT was a 403 "This form has expired").
  r.all('/', onlyMethods('GET'));
  r.all(['/sign-in', '/sign-up', '/sign-out', '/keys', '/keys/:id/revoke'], onlyMethods('GET', 'POST'));
  r.use(formBody({ limit: 8 * 1024, parameterLimit: 20 }));
  r.use(refuseControlCharacters);
  r.use(sessionMiddleware({ ...deps, secrets }));
  r.use(csrfProtection({ secrets, secureCookie: deps.secureCookie, path: SESSION_PATH }));

  const token = (req: Request) => req.csrfToken!();
  const takeNotice = (req: Request) => {
    const n = req.session.notice;
    delete req.session.notice;
    return n;
  };

  const renderSignedOut = (req: Request, res: Response, status: number, v: Omit<SignedOutView, 'csrf'> = {}) => {
    res.status(status).type('html').send(signedOutPage({ ...v, csrf: token(req) }));
  };

  const renderKeys = async (req: Request, res: Response, status: number, v: Pick<KeysView, 'newKey' | 'create'> = {}) => {
    const accountId = req.session.accountId!;
    const now = deps.clock();
    const keys = await listApiKeys(deps.db, { accountId });
    const [withUsage, fromNetwork] = await Promise.all([
      Promise.all(keys.map(async (k) => (k.revoked_at ? k : { ...k, usage: await usageToday(deps.quotaStore, k, now) }))),
      freeKeys.today(req),
    ]);
    // A single-use nonce for the create form: sending the same form twice (a reload of the
    // page that showed a new key) cannot make, and show, another key. One per session until it
    // is used, not one per page shown: the page shown again (another tab, a revocation's
    // redirect) left the form of the first page refused as already sent (an outside probe).
    const nonce = (req.session.createNonce ??= randomBytes(16).toString('hex'));
    res
      .status(status)
      .type('html')
      .send(keysPage({ ...v, csrf: token(req), nonce, email: req.session.email ?? '', baseUrl: deps.baseUrl, keys: withUsage, notice: takeNotice(req), createdToday: createdToday(keys, now), fromNetworkToday: fromNetwork === null ? undefined : { created: fromNetwork, limit: freeKeys.limit } }));
  };

  // Free keys created since 00:00 UTC, revoked ones included (createAccountKey's daily limit).
  const createdToday = (keys: { tier: string; created_at: Date }[], now: Date) =>
    keys.filter((k) => k.tier === 'free' && utcDay(k.created_at) === utcDay(now)).length;

  const requireSignedIn: RequestHandler = (req, res, next) => {
    if (req.session.accountId) return next();
    res.redirect(303, '/api-keys?notice=sign-in');
  };

  r.get('/', async (req, res) => {
    if (req.session.accountId) return renderKeys(req, res, 200);
    const code = typeof req.query.notice === 'string' ? req.query.notice : '';
    renderSignedOut(req, res, 200, { notice: takeNotice(req) ?? SIGNED_OUT_NOTICES.get(code) });
  });

  // The forms post to these; a bookmark or a reload after a redirect lands on the page.
  r.get(['/sign-in', '/sign-up', '/sign-out', '/keys'], (_req, res) => res.redirect(303, '/api-keys'));

  r.post('/sign-in', perIp, ...perEmail, async (req, res) => {
    const body = signInBody.parse(req.body ?? {});
    // Looked up (and throttled) in its normalized form; shown back as it was typed.
    const typed = body.email.trim();
    const email = normalizeEmail(body.email);
    const errors: FieldErrors<'email' | 'password'> = {};
    if (!email) errors.email = 'Enter your email address.';
    // Accounts only ever have valid addresses: any other spelling (alİce@…, which lower-cases
    // to ali̇ce@…) is refused before a lookup rather than answered as an unknown account.
    else if (!emailSchema.safeParse(email).success) errors.email = 'Enter an email address like name@example.com.';
    if (!body.password) errors.password = 'Enter your password.';
    if (Object.keys(errors).length > 0) return renderSignedOut(req, res, 400, { signIn: { email: typed, errors } });

    const account = await findAccountByEmail(deps.db, email);
    const matches = await verifyPassword(body.password, account?.password_hash ?? (await dummy()));
    if (!account || !account.password_hash || !matches) {
      // One answer for an unknown email, an account without a password and a wrong password.
      throttles.failedSignIn(res);
      return renderSignedOut(req, res, 400, { signIn: { email: typed, error: WRONG_CREDENTIALS } });
    }
    await startSignedInSession(req, account);
    throttles.signedIn(req, res);
    res.redirect(303, '/api-keys');
  });

  r.post('/sign-up', perIp, async (req, res) => {
    const body = signUpBody.parse(req.body ?? {});
    const errors: FieldErrors<'email' | 'password' | 'password_repeat'> = {};
    // Validated and stored in its normalized form (normalizeEmail): ＡＬＩＣＥ@x.lu is alice@x.lu.
    const parsedEmail = emailSchema.safeParse(normalizeEmail(body.email));
    if (!parsedEmail.success) errors.email = body.email.trim() ? parsedEmail.error.issues[0].message : 'Enter your email address.';
    const email = parsedEmail.success ? parsedEmail.data : body.email.trim();
    // A new address fits RFC 5321's and RFC 1035's lengths; the address of an account made before
    // that rule is told it exists, as any other (the second regression check of stop 52).
    const tooLong = parsedEmail.success ? await newAccountEmailProblem(deps.db, email) : null;
    if (tooLong) errors.email = `In an email address, ${tooLong}.`;
    const weak = await passwordProblem(body.password, email);
    if (weak) errors.password = weak;
    else if (body.password !== body.password_repeat) errors.password_repeat = 'The two passwords are not the same.';
    if (Object.keys(errors).length > 0) return renderSignedOut(req, res, 400, { signUp: { email, errors } });

    const account = await createAccount(deps.db, email, await hashPassword(body.password, deps.options.bcryptCost));
    if (!account) {
      // An account `npm run keys` made has no password and cannot sign in: "sign in instead" led
      // nowhere (an outside probe of stop 52). One message for both kinds, which the sign-in
      // form does not tell apart either.
      const message = 'An account with this email already exists. Sign in instead (an account our staff made for you has no password and cannot sign in here: ask them).';
      return renderSignedOut(req, res, 400, { signUp: { email, errors: { email: message } } });
    }
    await startSignedInSession(req, account, 'Your account is ready. Create your first key below.');
    res.redirect(303, '/api-keys');
  });

  r.post('/sign-out', async (req, res) => {
    await endSession(req);
    res.clearCookie(SESSION_COOKIE, { path: SESSION_PATH, httpOnly: true, sameSite: 'lax', secure: deps.secureCookie });
    res.redirect(303, '/api-keys');
  });

  r.post('/keys', requireSignedIn, freeKeys.count, async (req, res) => {
    const body = createBody.parse(req.body ?? {});
    const expected = req.session.createNonce;
    delete req.session.createNonce;
    const alreadySent = () => {
      // The form was already used (or is from an older page): nothing is created.
      req.session.notice = 'That form had already been sent (from this page or another copy of it), so no new key was made. Your keys are below.';
      res.redirect(303, '/api-keys');
    };
    // A form without its nonce was not sent from the page as it is (a hostile probe of stop 46
    // was told it had "already been sent").
    if (body.nonce === '') {
      req.session.notice = 'That form was incomplete (a part the page adds to it was missing), so no key was made. Use the form below.';
      return res.redirect(303, '/api-keys');
    }
    if (!expected || body.nonce !== expected) return alreadySent();
    const parsed = parseKeyName(body.name);
    if (!parsed.ok) {
      const error =
        parsed.problem === 'too_long'
          ? `Use at most ${KEY_NAME_MAX_CHARS} characters.`
          : parsed.problem === 'too_many_code_points'
            ? `This name is built of more than ${KEY_NAME_MAX_CODE_POINTS} Unicode code points: a character built of several (accents stacked on a letter, joined emoji) counts each. Use a shorter or plainer name.`
            : parsed.problem === 'control_character'
              ? 'Use visible characters only: no control or text-direction characters.'
              : 'Give the key a name.';
      return renderKeys(req, res, 400, { create: { name: body.name.trim().replace(/\s+/g, ' '), error } });
    }
    const name = parsed.name;
    // Over the Free keys a client IP may create today (counted by freeKeys.count before the
    // form was read): said as the account's own daily limit is.
    if (freeKeys.reached(res)) {
      deps.logger.info({ account_id: req.session.accountId }, 'api key refused on the web page: the daily limit of Free keys per client address');
      return renderKeys(req, res, 400, { create: { name, error: networkLimitReached(freeKeys.limit, 'the new one') } });
    }
    // New keys from the web page are Free; tiers change through the admin command line.
    let created: Awaited<ReturnType<typeof createAccountKey>>;
    try {
      // The same form sent twice at once (a double click): each request holds the nonce in its
      // own copy of the session, so the stored session decides which one takes it, in the
      // key's transaction (an outside probe: two concurrent posts made two keys).
      created = await createAccountKey(deps.db, { accountId: req.session.accountId!, tier: 'free', name, maxActive: MAX_ACTIVE_KEYS, maxPerDay: MAX_KEYS_PER_DAY }, (trx) =>
        takeCreateNonce(trx, req.sessionID, expected),
      );
    } catch (err) {
      // Nothing was made (the database is unavailable: a 503 page that says to try again): the
      // form stays usable, so that sending it again makes the key rather than saying the form
      // was used (an outside probe).
      req.session.createNonce = expected;
      throw err;
    }
    if (!created.ok && created.reason === 'used') return alreadySent();
    if (!created.ok && created.reason === 'daily_limit') {
      return renderKeys(req, res, 400, {
        create: { name, error: dailyLimitReached('the new one') },
      });
    }
    if (!created.ok) {
      return renderKeys(req, res, 400, {
        create: { name, error: 'You already have 5 active keys, the most an account can have. Revoke one you no longer use, then create the new one.' },
      });
    }
    freeKeys.created(res);
    deps.logger.info({ key_id: created.record.id, account_id: req.session.accountId }, 'api key created on the web page');
    // Shown in this response only (not stored anywhere in plaintext, not even in the session).
    await renderKeys(req, res, 201, { newKey: { name, key: created.key } });
  });

  r.get('/keys/:id/revoke', requireSignedIn, async (req, res, next) => {
    const id = String(req.params.id);
    const key = KEY_ID_PATTERN.test(id) ? await findAccountKey(deps.db, req.session.accountId!, id) : null;
    if (!key) return next(); // another account's key does not exist for this one: 404
    if (key.revoked_at) {
      req.session.notice = `The key “${key.name}” (${keyLabel(key)}) is already revoked.`;
      return res.redirect(303, '/api-keys');
    }
    res.type('html').send(confirmRevokePage({ csrf: token(req), key }));
  });

  r.post('/keys/:id/revoke', requireSignedIn, async (req, res, next) => {
    const id = String(req.params.id);
    const key = KEY_ID_PATTERN.test(id) ? await findAccountKey(deps.db, req.session.accountId!, id) : null;
    if (!key) return next();
    const result = await revokeAccountKey(deps.db, req.session.accountId!, id, deps.clock());
    if (result === 'not_found') return next();
    if (result === 'revoked') deps.logger.info({ key_id: id, account_id: req.session.accountId }, 'api key revoked on the web page');
    req.session.notice =
      result === 'revoked'
        ? `The key “${key.name}” (${keyLabel(key)}) is revoked: requests with it are refused from now on.`
        : `The key “${key.name}” (${keyLabel(key)}) was already revoked.`;
    res.redirect(303, '/api-keys');
  });

  r.use(htmlNotFound);
  r.use(htmlErrorHandler(deps.logger));
  return r;
}
