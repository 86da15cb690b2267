import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TemplateVersion } from '../../../../server/entities/index.js';
import { ApiError } from '../../../../server/errors.js';
import {
  escapeHtml,
  type RenderedTemplate,
  renderTemplate,
} from '../../../../server/services/templates/render-template.js';

const version = (fields: Partial<TemplateVersion>): TemplateVersion => ({
  subject: null,
  html: '',
  text: null,
  variables: [],
  ...fields,
});

const rendered = (result: RenderedTemplate | ApiError): RenderedTemplate => {
  if (result instanceof ApiError) throw new Error(`expected a render, got ${result.message}`);
  return result;
};
const refused = (result: RenderedTemplate | ApiError): ApiError => {
  if (!(result instanceof ApiError)) throw new Error('expected a refusal');
  return result;
};

describe('renderTemplate', () => {
  it('fills {{{NAME}}} in subject, html and text, with spaces around the name allowed', () => {
    const out = rendered(
      renderTemplate(
        version({ subject: 'Order {{{ORDER}}}', html: '<p>{{{ NAME }}} owes {{{PRICE}}}</p>', text: 'Hi {{{NAME}}}' }),
        { variables: { NAME: 'Ann', PRICE: 12.5, ORDER: 7 } },
      ),
    );
    expect(out).toEqual({ subject: 'Order 7', html: '<p>Ann owes 12.5</p>', text: 'Hi Ann' });
  });

  it('escapes values in html only, never in subject or text', () => {
    const out = rendered(
      renderTemplate(version({ subject: '{{{X}}}', html: '<a title="{{{X}}}">{{{X}}}</a>', text: '{{{X}}}' }), {
        variables: { X: `<b>"Tom" & 'Jerry'</b>` },
      }),
    );
    expect(out.html).toBe(
      '<a title="&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;">&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;</a>',
    );
    expect(out.subject).toBe(`<b>"Tom" & 'Jerry'</b>`);
    expect(out.text).toBe(`<b>"Tom" & 'Jerry'</b>`);
  });

  it('takes the send value, then the contact, then the inline fallback, then the declared one', () => {
    const template = version({
      html: '{{{A}}}|{{{B}}}|{{{C|inline}}}|{{{D}}}|{{{E|inline}}}',
      variables: [
        { key: 'A', type: 'string', fallbackValue: 'declared' },
        { key: 'B', type: 'string', fallbackValue: 'declared' },
        { key: 'C', type: 'string', fallbackValue: 'declared' },
        { key: 'D', type: 'string', fallbackValue: 'declared <d>' },
      ],
    });
    const out = rendered(
      renderTemplate(template, { variables: { A: 'sent' }, contact: { A: 'contact', B: 'contact', C: null } }),
    );
    expect(out.html).toBe('sent|contact|inline|declared &lt;d&gt;|inline');
  });

  it('names every variable left without a value or fallback, and renders nothing', () => {
    const error = refused(
      renderTemplate(
        version({
          subject: '{{{ZED}}}',
          html: '{{{NAME}}} {{{AGE}}} {{{NAME}}}',
          variables: [{ key: 'AGE', type: 'number', fallbackValue: null }],
        }),
        { variables: {} },
      ),
    );
    expect(error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: 'template.variables: no value and no fallback for `AGE`, `NAME`, `ZED`',
    });
  });

  it('checks values against the declared type; undeclared variables take either', () => {
    const template = version({
      html: '{{{PRICE}}} {{{NAME}}} {{{FREE}}}',
      variables: [
        { key: 'PRICE', type: 'number', fallbackValue: null },
        { key: 'NAME', type: 'string', fallbackValue: null },
      ],
    });
    expect(refused(renderTemplate(template, { variables: { PRICE: '12', NAME: 'Ann', FREE: 1 } })).message).toBe(
      'template.variables.PRICE: must be a number, as the template declares',
    );
    expect(refused(renderTemplate(template, { variables: { PRICE: 12, NAME: 3, FREE: 1 } })).message).toBe(
      'template.variables.NAME: must be a string, as the template declares',
    );
    expect(rendered(renderTemplate(template, { variables: { PRICE: 12, NAME: 'Ann', FREE: 'x' } })).html).toBe(
      '12 Ann x',
    );
  });

  it('leaves the unsubscribe links for the send path, and ignores Object prototype names', () => {
    const out = rendered(
      renderTemplate(
        version({
          html: '<a href="{{{UNSUBSCRIBE_URL}}}">x</a>{{{ALT_UNSUBSCRIBE_URL}}}{{{constructor|none}}}',
          text: '{{{UNSUBSCRIBE_URL}}}',
        }),
        { variables: {} },
      ),
    );
    expect(out).toEqual({
      subject: null,
      html: '<a href="{{{UNSUBSCRIBE_URL}}}">x</a>{{{ALT_UNSUBSCRIBE_URL}}}none',
      text: '{{{UNSUBSCRIBE_URL}}}',
    });
  });

  it('refuses a value that would break the subject onto two lines', () => {
    expect(
      refused(
        renderTemplate(version({ subject: 'Hi {{{NAME}}}', html: 'x' }), { variables: { NAME: 'Ann\r\nBcc: x@y.z' } }),
      ).message,
    ).toBe('template.variables.NAME: must be one line, as it fills the subject');
    // The same value in the body is fine.
    expect(
      rendered(renderTemplate(version({ html: '{{{NAME}}}', text: '{{{NAME}}}' }), { variables: { NAME: 'a\nb' } }))
        .text,
    ).toBe('a\nb');
  });

  it('leaves text that only looks like a placeholder alone', () => {
    const html = '{{NAME}} {{{ 1BAD }}} {{{NA-ME}}} { {{X}} }';
    expect(rendered(renderTemplate(version({ html }), { variables: { NAME: 'n', X: 'x' } })).html).toBe(html);
  });
});

describe('renderTemplate escaping (property)', () => {
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: fc.constantFrom('<', '>', '&', '"', "'", 'a', ' ', '/', '=') }),
  );

  it('no value ever adds markup to html: the output is the template with each value escaped', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 4 }), (values) => {
        const variables = Object.fromEntries(values.map((v, i) => [`V${i}`, v]));
        const html = values.map((_, i) => `<td title="{{{V${i}}}}">{{{V${i}}}}</td>`).join('');
        const out = rendered(renderTemplate(version({ html }), { variables })).html;
        expect(out).toBe(values.map((v) => `<td title="${escapeHtml(v)}">${escapeHtml(v)}</td>`).join(''));
        // Every tag and quote in the output is the template's own.
        const markup = (s: string) => (s.match(/[<>"']/g) ?? []).length;
        expect(markup(out)).toBe(markup(html));
      }),
    );
  });

  it('text and subject carry values byte for byte', () => {
    fc.assert(
      fc.property(
        value.filter((v) => !/[\u0000-\u001f\u007f]/.test(v)),
        (v) => {
          const out = rendered(
            renderTemplate(version({ subject: '[{{{V}}}]', html: 'x', text: '[{{{V}}}]' }), { variables: { V: v } }),
          );
          expect(out.subject).toBe(`[${v}]`);
          expect(out.text).toBe(`[${v}]`);
        },
      ),
    );
  });
});
