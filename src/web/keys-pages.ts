import { DAILY_QUOTA, type Tier } from '../domain/tiers.js';
import { KEY_NAME_MAX_CHARS } from '../domain/key-name.js';
import type { UsageToday } from '../rate-limit/quota-counters.js';
import type { ApiKeyRecord } from '../repositories/api-keys.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, field, page } from './layout.js';
import { MIN_PASSWORD_LENGTH } from './passwords.js';

// The most active keys an account may have (the admin command line is not held to it).
export const MAX_ACTIVE_KEYS = 5;
// Keys an account may create in a UTC day, revoked ones included (src/repositories/api-keys.ts).
export const MAX_KEYS_PER_DAY = 10;
// What the page says at that limit, before the form is sent and when one is sent anyway.
export const dailyLimitReached = (next: string) =>
  `${MAX_KEYS_PER_DAY} keys were created for your account today, the most in a UTC day (revoked keys count). You can create ${next} after 00:00 UTC.`;

// What the page says when the Free keys created from the visitor's client address today, for
// all accounts together, are at their limit (src/web/throttle.ts, freeKeysPerIp).
export const networkLimitReached = (limit: number, next: string) =>
  `${limit} Free keys were created from your network today, for all accounts together: the most in a UTC day. You can create ${next} after 00:00 UTC.`;

export type FieldErrors<K extends string> = Partial<Record<K, string>>;

export interface SignedOutView {
  csrf: string;
  notice?: string;
  signIn?: { email?: string; error?: string; errors?: FieldErrors<'email' | 'password'> };
  signUp?: { email?: string; errors?: FieldErrors<'email' | 'password' | 'password_repeat'> };
}

export interface KeysView {
  csrf: string;
  nonce: string;
  email: string;
  baseUrl: string;
  keys: (ApiKeyRecord & { usage?: UsageToday })[];
  notice?: string;
  newKey?: { name: string; key: string };
  create?: { name?: string; error?: string };
  // Free keys created since 00:00 UTC, revoked ones included.
  createdToday?: number;
  // Free keys created from the visitor's client address since 00:00 UTC, all accounts together,
  // and the most allowed (unknown while the store does not answer: no notice then).
  fromNetworkToday?: { created: number; limit: number };
}

const TIER_NAMES: Record<Tier, string> = { free: 'Free', starter: 'Starter', pro: 'Pro', enterprise: 'Enterprise' };
const number = new Intl.NumberFormat('en-GB');

function when(d: Date | null): SafeHtml {
  if (!d) return html`<span class="muted">never</span>`;
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export function keyLabel(k: Pick<ApiKeyRecord, 'prefix' | 'last4'>): string {
  return `${k.prefix}…${k.last4}`;
}

function notice(text: string | undefined): SafeHtml | '' {
  return text ? html`<div class="notice" role="status">${text}</div>` : '';
}

const intro = html`<h1>API keys</h1>
<p class="lead">Keys let your programs read the Luxembourg listings feed: send one in the
<code>Authorization: Bearer &lt;key&gt;</code> header. The <a href="/docs">API docs</a> describe every
endpoint; the project's README has set-up notes, tiers and examples.</p>`;

export function signedOutPage(v: SignedOutView): string {
  const si = v.signIn ?? {};
  const su = v.signUp ?? {};
  return page({
    title: 'API keys: sign in',
    main: html`${intro}
${notice(v.notice)}
<div class="grid-2">
<section class="card" aria-labelledby="signin-title">
<h2 id="signin-title">Sign in</h2>
<form method="post" action="/api-keys/sign-in" novalidate>
${csrfField(v.csrf)}
${si.error ? html`<p class="form-error" role="alert">${si.error}</p>` : ''}
${field({ form: 'signin', name: 'email', label: 'Email', type: 'email', value: si.email, error: si.errors?.email, autocomplete: 'username', required: true })}
${field({ form: 'signin', name: 'password', label: 'Password', type: 'password', error: si.errors?.password, autocomplete: 'current-password', required: true })}
<button type="submit">Sign in</button>
</form>
</section>
<section class="card" aria-labelledby="signup-title">
<h2 id="signup-title">Create an account</h2>
<form method="post" action="/api-keys/sign-up" novalidate>
${csrfField(v.csrf)}
${field({ form: 'signup', name: 'email', label: 'Email', type: 'email', value: su.email, error: su.errors?.email, autocomplete: 'email', required: true, maxlength: 254 })}
${field({
  form: 'signup',
  name: 'password',
  label: 'Password',
  type: 'password',
  error: su.errors?.password,
  hint: `At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words work well; common passwords are refused.`,
  autocomplete: 'new-password',
  required: true,
  minlength: MIN_PASSWORD_LENGTH,
})}
${field({ form: 'signup', name: 'password_repeat', label: 'Repeat the password', type: 'password', error: su.errors?.password_repeat, autocomplete: 'new-password', required: true })}
<button type="submit">Create account</button>
</form>
</section>
</div>`,
  });
}

function usageCells(k: KeysView['keys'][number]): SafeHtml {
  const u = k.usage;
  if (!u || u.kind === 'unlimited') {
    return html`<td data-label="Requests today" class="num muted">not counted</td><td data-label="Remaining today" class="num">unlimited</td>`;
  }
  if (u.kind === 'unknown') {
    return html`<td data-label="Requests today" class="num muted">unavailable</td><td data-label="Remaining today" class="num muted">of ${number.format(u.limit)}</td>`;
  }
  return html`<td data-label="Requests today" class="num">${number.format(u.used)}</td><td data-label="Remaining today" class="num">${number.format(u.remaining)} of ${number.format(u.limit)}</td>`;
}

function newKeyBox(k: { name: string; key: string }, baseUrl: string): SafeHtml {
  return html`<section class="new-key" aria-labelledby="new-key-title">
<h2 id="new-key-title">Your new key${k.name ? html` “${k.name}”` : ''}</h2>
<p class="warning">Copy it now: this is the only time it is shown. We keep only a fingerprint of it,
so it cannot be shown again. If you lose it, revoke it and create another.</p>
<div class="key-box"><code id="new-key">${k.key}</code>
<button type="button" class="secondary" data-copy="new-key" data-status="copy-status" hidden>Copy</button></div>
<p id="copy-status" class="muted" role="status" aria-live="polite"></p>
<p>Try it, with the key in the environment variable <code>API_KEY</code>:</p>
<pre><code>curl -H "Authorization: Bearer $API_KEY" "${baseUrl}/api/v1/listings?per_page=5"</code></pre>
</section>`;
}

export function keysPage(v: KeysView): string {
  const active = v.keys.filter((k) => !k.revoked_at);
  const revoked = v.keys.filter((k) => k.revoked_at);
  const full = active.length >= MAX_ACTIVE_KEYS;
  const freeQuota = number.format(DAILY_QUOTA.free ?? 0);
  return page({
    title: 'API keys',
    copyScript: Boolean(v.newKey),
    main: html`${intro}
<div class="actions"><p class="muted">Signed in as <strong>${v.email}</strong></p>
<form class="inline" method="post" action="/api-keys/sign-out">${csrfField(v.csrf)}<button type="submit" class="link">Sign out</button></form></div>
${notice(v.notice)}
${v.newKey ? newKeyBox(v.newKey, v.baseUrl) : ''}
<section class="card" aria-labelledby="keys-title">
<h2 id="keys-title">Your keys</h2>
${
  active.length === 0
    ? html`<p class="muted">You have no active keys. Create one below.</p>`
    : html`<table class="keys">
<thead><tr><th scope="col">Name</th><th scope="col">Tier</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Requests today</th><th scope="col">Remaining today</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>
${active.map(
  (k) => html`<tr>
<td data-label="Name">${k.name || html`<span class="muted">(no name)</span>`}</td>
<td data-label="Tier"><span class="tier">${TIER_NAMES[k.tier]}</span></td>
<td data-label="Key"><code>${keyLabel(k)}</code></td>
<td data-label="Created">${when(k.created_at)}</td>
<td data-label="Last used">${when(k.last_used_at)}</td>
${usageCells(k)}
<td data-label="Action"><a href="/api-keys/keys/${k.id}/revoke">Revoke…</a></td>
</tr>`,
)}
</tbody>
</table>
<p class="muted">Counts reset at 00:00 UTC. “Last used” is updated within 30 seconds of use.</p>`
}
</section>
<section class="card" aria-labelledby="create-title">
<h2 id="create-title">Create a key</h2>
<p>New keys are on the Free tier: ${freeQuota} requests per UTC day, without flagged listings.
Other tiers are set by our team on request. You can have up to ${MAX_ACTIVE_KEYS} active keys, and create up to ${MAX_KEYS_PER_DAY} in a UTC day.</p>
${
  full && !v.create?.error
    ? html`<p class="form-error" role="status">You have ${MAX_ACTIVE_KEYS} active keys, the most an account can have. Revoke one you no longer use to create another.</p>`
    : (v.createdToday ?? 0) >= MAX_KEYS_PER_DAY && !v.create?.error
      ? html`<p class="form-error" role="status">${dailyLimitReached('another')}</p>`
      : v.fromNetworkToday && v.fromNetworkToday.created >= v.fromNetworkToday.limit && !v.create?.error
        ? html`<p class="form-error" role="status">${networkLimitReached(v.fromNetworkToday.limit, 'another')}</p>`
        : html`<form method="post" action="/api-keys/keys">
${csrfField(v.csrf)}
<input type="hidden" name="nonce" value="${v.nonce}">
${field({ form: 'create', name: 'name', label: 'Name', type: 'text', value: v.create?.name, error: v.create?.error, hint: `What the key is for, e.g. “CRM sync” or “staging”; at most ${KEY_NAME_MAX_CHARS} characters.`, autocomplete: 'off', required: true })}
<button type="submit">Create key</button>
</form>`
}
</section>
${
  revoked.length > 0
    ? html`<section class="card"><details><summary>Revoked keys (${revoked.length})</summary>
<ul>${revoked.map((k) => html`<li>${k.name || '(no name)'}: <code>${keyLabel(k)}</code>, revoked ${when(k.revoked_at)}</li>`)}</ul>
</details></section>`
    : ''
}`,
  });
}

export function confirmRevokePage(v: { csrf: string; key: ApiKeyRecord }): string {
  const k = v.key;
  return page({
    title: 'Revoke a key',
    main: html`<section class="card">
<h1>Revoke the key${k.name ? html` “${k.name}”` : ''}?</h1>
<p><code>${keyLabel(k)}</code>, ${TIER_NAMES[k.tier]} tier, created ${when(k.created_at)}, last used ${when(k.last_used_at)}.</p>
<p><strong>Every program using this key will be refused from its next request on.</strong> A revoked key cannot be restored; you can create a new one.</p>
<form method="post" action="/api-keys/keys/${k.id}/revoke" class="actions">
${csrfField(v.csrf)}
<button type="submit" class="danger">Revoke this key</button>
<a href="/api-keys">Cancel</a>
</form>
</section>`,
  });
}
