import type { TranscriptEntry, TranscriptEvent } from '../domain/records.js';
import { type Html, html } from './html.js';

/** How a transcript event (not speech) is labelled. */
const transcriptEventLabels: Record<TranscriptEvent, string> = {
  dtmf: 'pressed keys',
  tool_call: 'called a tool',
  tool_result: 'tool answered',
  transfer: 'transfer',
  end_call: 'hung up because',
  do_not_call: 'put on the do-not-call list',
};

/** A call's transcript as the call page and a test run's failures show it: who, when, what. */
export function transcriptList(transcript: readonly TranscriptEntry[]): Html {
  return html`<ol class="transcript">${transcript.map(
    (entry) => html`<li class="${entry.role}"><strong>${entry.role === 'agent' ? 'Agent' : 'Callee'}</strong>
          ${entry.event ? html`<em>${transcriptEventLabels[entry.event]}</em>` : ''}
          <span class="muted">${(entry.start_ms / 1000).toFixed(1)} s</span><br>${entry.event ? html`<code>${entry.text}</code>` : entry.text}</li>`,
  )}</ol>`;
}
