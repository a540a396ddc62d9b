import type { AgentFormText } from '../../admin/agentSettings.js';
import { extractionFieldTypes } from '../../domain/records.js';
import { type Html, html } from '../html.js';
import { csrfField } from '../layout.js';

/** What a new agent starts from: an agent that speaks as it stands (it greets, then listens). */
export const emptyAgentForm: AgentFormText = {
  name: '',
  prompt: 'Remind {{customer_name}} of their appointment on {{appointment_day}}.',
  firstMessage:
    'Hello {{customer_name}}, this is a reminder of your appointment on {{appointment_day}}. Please call us if you need to change it.',
  variables: 'customer_name!\nappointment_day=Tuesday',
  extraction: '',
  brain: 'script',
  script: '',
  settings: '{}',
  maxDurationS: '600',
  silenceTimeoutS: '20',
};

/** The agent editor: every field labelled, with a hint saying what it takes. */
export function agentForm(action: string, csrfToken: string, form: AgentFormText, submitLabel: string): Html {
  return html`<form method="post" action="${action}" class="stack">
  ${csrfField(csrfToken)}
  <div><label for="name">Name</label><input id="name" name="name" type="text" required maxlength="200" value="${form.name}"></div>
  <div><label for="prompt">Prompt <span class="hint">the system prompt; {{variable}} placeholders are filled per call</span></label>
    <textarea id="prompt" name="prompt" required rows="6">${form.prompt}</textarea></div>
  <div><label for="first_message">First message <span class="hint">what the agent says when the callee answers</span></label>
    <textarea id="first_message" name="first_message" rows="2">${form.firstMessage}</textarea></div>
  <div><label for="variables">Variables <span class="hint">one per line: NAME[:TYPE][!][=DEFAULT] — TYPE any, string, number or boolean; ! marks it required</span></label>
    <textarea id="variables" name="variables" rows="3">${form.variables}</textarea></div>
  <div><label for="extraction">Extraction fields <span class="hint">one per line: name:type:description; types ${extractionFieldTypes.join(', ')}</span></label>
    <textarea id="extraction" name="extraction" rows="3">${form.extraction}</textarea></div>
  <div><label for="brain">Brain <span class="hint">script: a dialog graph that works offline; llm: prompt-driven, needs an LLM provider</span></label>
    <select id="brain" name="brain">
      <option value="script"${form.brain === 'script' ? html` selected` : ''}>script</option>
      <option value="llm"${form.brain === 'llm' ? html` selected` : ''}>llm</option>
    </select></div>
  <div><label for="script">Script <span class="hint">JSON dialog graph for the script brain; empty: say the first message, then listen</span></label>
    <textarea id="script" name="script" rows="5">${form.script}</textarea></div>
  <div><label for="settings">Voice and provider settings <span class="hint">a JSON object (voice, STT, LLM providers)</span></label>
    <textarea id="settings" name="settings" rows="4">${form.settings}</textarea></div>
  <div class="row">
    <label for="max_duration_s">Max duration (s)<input id="max_duration_s" name="max_duration_s" type="number" min="1" max="14400" required value="${form.maxDurationS}"></label>
    <label for="silence_timeout_s">Silence timeout (s)<input id="silence_timeout_s" name="silence_timeout_s" type="number" min="1" max="14400" required value="${form.silenceTimeoutS}"></label>
  </div>
  <div><button type="submit">${submitLabel}</button></div>
</form>`;
}

export function agentFormFrom(form: URLSearchParams): AgentFormText {
  const get = (name: string) => form.get(name) ?? '';
  return {
    name: get('name'),
    prompt: get('prompt'),
    firstMessage: get('first_message'),
    variables: get('variables'),
    extraction: get('extraction'),
    brain: get('brain'),
    script: get('script'),
    settings: get('settings'),
    maxDurationS: get('max_duration_s'),
    silenceTimeoutS: get('silence_timeout_s'),
  };
}
