import { AppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import type { AgentRecord } from '../../domain/records.js';
import type { DashboardOptions, Viewer } from '../context.js';
import { type Html, html } from '../html.js';

/** The viewer's agent `id`; a 404 for another account's or a malformed id. */
export async function agentOf(options: DashboardOptions, viewer: Viewer, id: string): Promise<AgentRecord> {
  const agent = isIdOf('agent', id) ? await options.store.agents.get(viewer.account.id, id) : null;
  if (!agent) throw new AppError('not_found', 'No such agent in this account.');
  return agent;
}

const tabs = [
  { key: 'settings', label: 'Settings', suffix: '' },
  { key: 'tests', label: 'Test', suffix: '/tests' },
] as const;

/** The tabs of an agent's pages: its settings, and its test runs. */
export function agentTabs(agent: AgentRecord, current: (typeof tabs)[number]['key']): Html {
  return html`<nav aria-label="Agent pages" class="tabs"><ul>${tabs.map(
    (tab) =>
      html`<li><a href="/agents/${agent.id}${tab.suffix}"${tab.key === current ? html` aria-current="page"` : ''}>${tab.label}</a></li>`,
  )}</ul></nav>`;
}
