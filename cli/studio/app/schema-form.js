// A form from a tool's input schema: one labelled field per property —
// text, number, a checkbox, a choice for an enum, JSON for arrays and
// objects — and the arguments object it stands for.
import { html } from 'htm/preact';

export function fieldsOf(schema) {
  const properties = schema?.properties ?? {};
  const required = new Set(schema?.required ?? []);
  return Object.entries(properties).map(([name, prop]) => ({ name, prop: prop ?? {}, required: required.has(name), kind: kindOf(prop ?? {}) }));
}

function kindOf(prop) {
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  if (Array.isArray(prop.enum)) return 'enum';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'string') return 'string';
  return 'json';
}

export function initialValues(fields) {
  return Object.fromEntries(fields.map((f) => [f.name, f.prop.default !== undefined ? (f.kind === 'json' ? JSON.stringify(f.prop.default) : f.prop.default) : f.kind === 'boolean' ? false : '']));
}

/** The arguments, or { error } naming the field that cannot be read. */
export function toArguments(fields, values) {
  const args = {};
  for (const f of fields) {
    const value = values[f.name];
    if (f.kind === 'boolean') {
      if (value || f.required) args[f.name] = Boolean(value);
      continue;
    }
    if (value === '' || value === undefined) {
      if (f.required) return { error: `${f.name} is required` };
      continue;
    }
    if (f.kind === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) return { error: `${f.name} must be a number` };
      args[f.name] = n;
    } else if (f.kind === 'json') {
      try {
        args[f.name] = JSON.parse(value);
      } catch {
        return { error: `${f.name} must be JSON (e.g. ["a", "b"] or {"k": 1})` };
      }
    } else args[f.name] = value;
  }
  return { args };
}

export function SchemaFields({ tool, fields, values, onChange }) {
  if (fields.length === 0) return html`<p class="muted small">No inputs.</p>`;
  return fields.map((f) => {
    const id = `f-${tool}-${f.name}`;
    const hint = f.prop.description ? html`<span class="hint" id=${`${id}-hint`}>${f.prop.description}</span>` : null;
    const common = { id, name: f.name, 'aria-describedby': f.prop.description ? `${id}-hint` : undefined, required: f.required };
    const set = (value) => onChange({ ...values, [f.name]: value });
    let input;
    if (f.kind === 'boolean') {
      return html`<div class="field check">
        <input type="checkbox" ...${common} checked=${Boolean(values[f.name])} onChange=${(e) => set(e.currentTarget.checked)} />
        <label for=${id}>${f.name}</label>${hint}
      </div>`;
    }
    if (f.kind === 'enum') {
      input = html`<select ...${common} value=${values[f.name]} onChange=${(e) => set(e.currentTarget.value)}>
        ${f.required ? null : html`<option value="">—</option>`}
        ${f.prop.enum.map((v) => html`<option value=${v}>${String(v)}</option>`)}
      </select>`;
    } else if (f.kind === 'json') {
      input = html`<textarea ...${common} rows="3" spellcheck="false" placeholder=${f.prop.type === 'array' ? '["…"]' : '{ }'} value=${values[f.name]} onInput=${(e) => set(e.currentTarget.value)}></textarea>`;
    } else {
      input = html`<input type=${f.kind === 'number' ? 'number' : 'text'} step=${f.prop.type === 'integer' ? '1' : 'any'} ...${common} value=${values[f.name]} onInput=${(e) => set(e.currentTarget.value)} />`;
    }
    return html`<div class="field">
      <label for=${id}>${f.name}${f.required ? html`<span class="req" aria-hidden="true"> *</span>` : null} <span class="type">${f.prop.type ?? (f.kind === 'enum' ? 'choice' : 'any')}</span></label>
      ${input}${hint}
    </div>`;
  });
}
