import { afterEach, describe, expect, it } from 'vitest';
import { sqlOn, storeKinds } from '../helpers/stores.js';
import { type ApiFronts, anonymousCsrf, createDashboardUser, startApiFronts } from './fronts.js';

/**
 * Secrets at rest, dashboard sessions: the sessions table keeps the SHA-256 of the cookie's token
 * and no usable CSRF token, so whoever reads the database can neither ride a session nor forge
 * its forms; the token in the rendered forms still works.
 */

const email = 'owner@example.com';
const password = 'a long enough password';

async function signIn(url: string): Promise<string> {
  const csrf = anonymousCsrf();
  const response = await fetch(`${url}/sign-in`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: csrf.cookie },
    body: new URLSearchParams({ csrf_token: csrf.field, email, password }).toString(),
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const session = /cw_session=([A-Za-z0-9_-]{43})/.exec(response.headers.get('set-cookie') ?? '')?.[1];
  if (!session) throw new Error('no session cookie');
  return session;
}

async function signOut(url: string, session: string, csrfToken: string): Promise<number> {
  const response = await fetch(`${url}/sign-out`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `cw_session=${session}` },
    body: new URLSearchParams({ csrf_token: csrfToken }).toString(),
    redirect: 'manual',
  });
  await response.text();
  return response.status;
}

describe.each(storeKinds)('dashboard session secrets on the %s store', (kind) => {
  let fronts: ApiFronts | undefined;

  afterEach(async () => {
    await fronts?.dispose();
    fronts = undefined;
  });

  it('the database holds neither the session token nor the CSRF token its forms carry', async () => {
    fronts = await startApiFronts(kind, { fronts: 1 });
    const url = fronts.urls[0] as string;
    await createDashboardUser(fronts.store, email, password);
    const session = await signIn(url);
    const page = await fetch(`${url}/`, { headers: { Cookie: `cw_session=${session}` } });
    expect(page.status).toBe(200);
    const formToken = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
    expect(formToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const rows = (await sqlOn(fronts.store, 'SELECT token_hash, csrf_token FROM sessions')) as {
      token_hash: string;
      csrf_token: string;
    }[];
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(session);
    expect(stored).not.toContain(formToken);

    // What the table does hold is no CSRF token: a form carrying it is refused.
    expect(await signOut(url, session, rows[0]?.csrf_token ?? '')).toBe(403);
    expect(await signOut(url, session, formToken as string)).toBe(303);
  });
});
