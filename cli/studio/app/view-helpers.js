// Small shared views: JSON shown readably, durations.
import { html } from 'htm/preact';

export function formatMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

export function JsonView({ value }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return html`<pre class="json">${text}</pre>`;
}
