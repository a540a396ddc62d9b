import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Our child processes whose title (what `ps` shows) is `title`, from /proc (Linux). */
export function childProcessesTitled(title: string): number[] {
  const taskDirectory = `/proc/${process.pid}/task`;
  const children = readdirSync(taskDirectory).flatMap((task) =>
    readFileSync(join(taskDirectory, task, 'children'), 'utf8')
      .split(' ')
      .filter(Boolean)
      .map(Number),
  );
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(title);
    } catch {
      return false; // it has just exited
    }
  });
}

/**
 * Polls `condition` every `intervalMs` for up to `timeoutMs` (a bounded wait, not a timing
 * assertion); throws when it does not hold by then.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
