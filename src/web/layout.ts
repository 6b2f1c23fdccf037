import { COPY_SCRIPT_PATH, STYLE_PATH } from './assets.js';
import { html, type Interpolation, type SafeHtml } from './html.js';

const SITE = 'Luxembourg listings feed';

export function page(opts: { title: string; main: SafeHtml; copyScript?: boolean }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${opts.title} · ${SITE}</title>
<link rel="stylesheet" href="${STYLE_PATH}">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
${opts.copyScript ? html`<script src="${COPY_SCRIPT_PATH}" defer></script>` : ''}
</head>
<body>
<header class="site"><div class="bar">
<a class="brand" href="/api-keys">${SITE}</a>
<nav aria-label="Site"><a href="/market">Market prices</a><a href="/docs">API docs</a><a href="/api-keys">API keys</a></nav>
</div></header>
<main id="main">
${opts.main}
</main>
<footer class="site">
<p>A read-only API of Luxembourg property listings. Reference: <a href="/docs">API docs</a>;
set-up, tiers and examples: the project's README.</p>
</footer>
</body>
</html>
`.value;
}

export interface FieldSpec {
  form: string; // prefix that keeps ids unique when a page has several forms
  name: string;
  label: string;
  type: 'email' | 'password' | 'text';
  value?: string;
  error?: string;
  hint?: string;
  autocomplete: string;
  required?: boolean;
  minlength?: number;
  maxlength?: number;
}

// A labelled input with its hint and, when there is one, its error right below it.
export function field(f: FieldSpec): SafeHtml {
  const id = `${f.form}-${f.name}`;
  const described = [f.hint ? `${id}-hint` : '', f.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${f.error ? ' has-error' : ''}">
<label for="${id}">${f.label}</label>
${f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : ''}
<input id="${id}" name="${f.name}" type="${f.type}" autocomplete="${f.autocomplete}"${
    f.value !== undefined && f.type !== 'password' ? html` value="${f.value}"` : ''
  }${f.required ? html` required` : ''}${f.minlength ? html` minlength="${f.minlength}"` : ''}${
    f.maxlength ? html` maxlength="${f.maxlength}"` : ''
  }${described ? html` aria-describedby="${described}"` : ''}${f.error ? html` aria-invalid="true"` : ''}>
${f.error ? html`<p class="field-error" id="${id}-error">${f.error}</p>` : ''}
</div>`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

// Back to the page a request was for: the market prices, or (by default) the key page.
export function backFor(url: string): { href: string; label: string } | undefined {
  return url.startsWith('/market') ? { href: '/market', label: 'Back to the market prices' } : undefined;
}

// A page with a heading, a message and a way back.
export function messagePage(opts: { title: string; message: Interpolation; back?: { href: string; label: string } }): string {
  const back = opts.back ?? { href: '/api-keys', label: 'Back to your API keys' };
  return page({
    title: opts.title,
    main: html`<div class="card">
<h1>${opts.title}</h1>
<p>${opts.message}</p>
<p><a href="${back.href}">${back.label}</a></p>
</div>`,
  });
}
