import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/lib/paths.js';

// Issue 10, item 14: docker-compose published `${PORT}:3000` while the app listens on PORT
// from .env: with PORT=3001 nothing answered. No Docker engine runs here, so the compose
// file is checked by reading it, with compose's own interpolation rules for ${VAR:-default}.

interface ComposeService {
  environment?: Record<string, string>;
  env_file?: unknown;
  ports?: string[];
}

// `${VAR:-default}` and `${VAR}` as compose resolves them (from the shell or the project's .env).
function interpolate(s: string, env: Record<string, string>): string {
  return s.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, def?: string) => (env[name] ? env[name] : (def ?? '')));
}

const compose = parse(readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8')) as { services: Record<string, ComposeService> };

describe('docker-compose.yml', () => {
  it.each<Record<string, string>>([{}, { PORT: '3001' }, { PORT: '8080' }])('publishes the port the API listens on (env %j)', (env: Record<string, string>) => {
    const api = compose.services.api;
    // What the app sees: `environment` wins over env_file (.env), which gives PORT as is.
    const appPort = api.environment?.PORT !== undefined ? interpolate(String(api.environment.PORT), env) : (env.PORT ?? '3000');
    const published = (api.ports ?? []).map((p) => interpolate(p, env));
    expect(published).toHaveLength(1);
    const [host, container] = published[0].split(':');
    expect(container, published[0]).toBe(appPort);
    expect(host).toBe(env.PORT ?? '3000');
  });

  it('the image health check asks the port the app listens on', () => {
    const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*process\.env\.PORT/);
  });
});
