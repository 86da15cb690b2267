import type { Preferences } from '../../services/preferences/preferences.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
  :root { color-scheme: light dark; --accent: #2f5bd3; --muted: #667085; --line: #d0d5dd; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: Canvas; color: CanvasText; }
  main { max-width: 34rem; margin: 3rem auto; padding: 0 1.25rem; }
  h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
  p { margin: .5rem 0; }
  .muted { color: var(--muted); }
  .status { border-left: 4px solid var(--accent); padding: .5rem .75rem; margin: 1rem 0; background: color-mix(in srgb, var(--accent) 10%, transparent); }
  fieldset { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; margin: 1.25rem 0; }
  legend { font-weight: 600; padding: 0 .25rem; }
  label { display: flex; gap: .75rem; align-items: flex-start; padding: .6rem 0; cursor: pointer; }
  label + label { border-top: 1px solid var(--line); }
  input[type=checkbox] { width: 1.15rem; height: 1.15rem; margin-top: .2rem; accent-color: var(--accent); }
  .description { display: block; color: var(--muted); font-size: .9rem; }
  .actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1rem; }
  button { font: inherit; padding: .6rem 1.1rem; border-radius: .5rem; border: 1px solid var(--accent); cursor: pointer; }
  button.primary { background: var(--accent); color: #fff; }
  button.secondary { background: transparent; color: inherit; border-color: var(--line); }
  button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`;

/** The shell of Postlane's public pages (preferences, shared emails): one inline style sheet, no script. */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** The hosted preference page: plain HTML, one form, no script, usable with a keyboard and a screen reader. */
export function renderPreferencePage(preferences: Preferences, notice: string | null): string {
  const topics = preferences.topics
    .map(
      (topic) => `<label>
  <input type="checkbox" name="topic" value="${escapeHtml(topic.id)}"${topic.subscription === 'opt_in' ? ' checked' : ''}>
  <span>${escapeHtml(topic.name)}${topic.description ? `<span class="description">${escapeHtml(topic.description)}</span>` : ''}</span>
</label>`,
    )
    .join('\n');
  // Which topics the form showed: an unchecked box sends nothing, and absence then means opt-out.
  const offered = preferences.topics
    .map((topic) => `<input type="hidden" name="offered" value="${escapeHtml(topic.id)}">`)
    .join('\n');
  const status = notice ? `<p class="status" role="status">${escapeHtml(notice)}</p>` : '';
  const body = preferences.unsubscribed
    ? `<p>You are unsubscribed from all email from ${escapeHtml(preferences.teamName)}. To receive it again, contact the sender.</p>`
    : `<form method="post">
${preferences.topics.length ? `<fieldset>\n<legend>Email I want to receive</legend>\n${topics}\n</fieldset>\n${offered}` : ''}
<div class="actions">
${preferences.topics.length ? '<button class="primary" type="submit" name="action" value="save">Save preferences</button>' : ''}
<button class="${preferences.topics.length ? 'secondary' : 'primary'}" type="submit" name="action" value="unsubscribe_all">Unsubscribe from all</button>
</div>
</form>`;
  return layout(
    `Email preferences – ${preferences.teamName}`,
    `<h1>Email preferences</h1>
<p class="muted">${escapeHtml(preferences.email)} · ${escapeHtml(preferences.teamName)}</p>
${status}
${body}`,
  );
}

export function renderMessagePage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
