import { describe, expect, it } from 'vitest';
import { passwordProblem } from '../../src/web/passwords.js';

// The rules of a new account's password and the zxcvbn estimator behind them
// (docs/operations.md, "Web pages: accounts and keys").
describe('passwordProblem', () => {
  it.each(['password1password', 'Password!Password!', 'p@ssw0rdp@ssw0rd', 'monkeymonkey', 'aaaaaaaaaaab', '1234567890ab', 'passwordpassword1', 'ababababababcd'])(
    'refuses %j: easy to guess, though no rule of the short lists names it (an outside probe of stop 49)',
    async (password) => {
      expect(await passwordProblem(password, 'someone@example.lu')).toMatch(/too common|too easy to guess: it repeats words or characters/);
    },
  );

  it.each(['tram stop kirchberg 42 violet', 'a long enough password 1', 'Sonnenblume Kaffee 7', 'xK9#mP2qLw8!'])('accepts %j', async (password) => {
    expect(await passwordProblem(password, 'someone@example.lu')).toBeNull();
  });

  it('reads the email as a guess: a password built on its name, or its parts joined, is refused', async () => {
    expect(await passwordProblem('jean.dupont.1985', 'jean.dupont@example.lu')).toMatch(/email/);
    expect(await passwordProblem('dupontjean1985!', 'dupontjean@example.lu')).toMatch(/email/);
    // Its regression probe: the parts of "jean.muller" joined, or with a space, were accepted.
    for (const password of ['jeanmuller1985', 'Jean Muller 1985']) expect(await passwordProblem(password, 'jean.muller@example.lu'), password).toMatch(/email/);
  });

  it('does not take one part of an email with a stray separator for the email (its re-check)', async () => {
    expect(await passwordProblem('info-river-castle-9', '_info@x.lu')).toBeNull();
    expect(await passwordProblem('Informatique!Soleil42', 'info-@x.lu')).toBeNull();
  });

  it('says why a repeated word is refused: not "too common" (its regression probe)', async () => {
    expect(await passwordProblem('apple river river', 'someone@example.lu')).toMatch(/too easy to guess: it repeats words/);
  });
});
