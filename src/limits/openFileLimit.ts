import { readFileSync } from 'node:fs';

/**
 * The process's soft limit on open files (`ulimit -n`), read from /proc/self/limits; null where
 * that file does not exist (not Linux) or says "unlimited".
 */
export function openFileSoftLimit(limitsPath = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(limitsPath, 'utf8');
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(text)?.[1];
  return soft === undefined || soft === 'unlimited' ? null : Number(soft);
}

/**
 * How many accepted SIP TCP connections may be held: the configured cap, but never more than half
 * the process's open-file limit, so the HTTP API, webhooks, media sockets and the database keep the
 * other half whatever the SIP port is sent.
 */
export function sipConnectionBudget(configured: number, softLimit: number | null): number {
  if (softLimit === null) return configured;
  return Math.max(1, Math.min(configured, Math.floor(softLimit / 2)));
}
