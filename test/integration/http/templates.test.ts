import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { Email, Template } from '../../../server/entities/index.js';
import { publishTemplate } from '../../../server/services/templates/publish-template.js';
import { createTemplate } from '../../../server/services/templates/save-template.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_PUBLIC_URL: 'https://mail.example.com' } });

async function client() {
  const { token, teamId } = await app.createTeamWithKey();
  const resend = app.sdk(token);
  const stored = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
  const countTemplates = () => app.run(() => app.deps.orm.em.count(Template, { team: teamId }));
  const countEmails = () => app.run(() => app.deps.orm.em.count(Email, { team: teamId }));
  return { token, teamId, resend, stored, countTemplates, countEmails };
}

const send = { from: 'Acme <hello@acme.test>', to: 'ann@example.com', subject: 'Your order' };

describe('templates through the official SDK', () => {
  it('create (a draft), get by id or alias, update, publish, duplicate, list, remove', async () => {
    const { resend } = await client();
    const created = await resend.templates.create({
      name: 'order-confirmation',
      alias: 'order-confirmation',
      subject: 'Order {{{ORDER}}}',
      html: '<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p>',
      text: 'Name: {{{PRODUCT}}}',
      variables: [
        { key: 'PRODUCT', type: 'string', fallbackValue: 'item' },
        { key: 'PRICE', type: 'number', fallbackValue: 25 },
      ],
    });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'template', id: expect.any(String) });
    const id = created.data!.id;

    const got = await resend.templates.get(id);
    expect(got.data).toEqual({
      object: 'template',
      id,
      name: 'order-confirmation',
      alias: 'order-confirmation',
      status: 'draft',
      published_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      current_version_id: expect.any(String),
      subject: 'Order {{{ORDER}}}',
      html: '<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p>',
      text: 'Name: {{{PRODUCT}}}',
      from: null,
      reply_to: null,
      has_unpublished_versions: false,
      variables: [
        {
          key: 'PRODUCT',
          type: 'string',
          fallback_value: 'item',
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        {
          key: 'PRICE',
          type: 'number',
          fallback_value: 25,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
    });
    expect((await resend.templates.get('order-confirmation')).data?.id).toBe(id);

    const published = await resend.templates.publish('order-confirmation');
    expect(published.data).toEqual({ object: 'template', id });
    const live = (await resend.templates.get(id)).data!;
    expect(live).toMatchObject({
      status: 'published',
      published_at: expect.any(String),
      has_unpublished_versions: false,
    });

    expect((await resend.templates.update(id, { html: '<p>v2 {{{PRODUCT}}}</p>' })).data).toEqual({
      object: 'template',
      id,
    });
    const edited = (await resend.templates.get(id)).data!;
    expect(edited).toMatchObject({
      status: 'published',
      html: '<p>v2 {{{PRODUCT}}}</p>',
      has_unpublished_versions: true,
    });
    expect(edited.current_version_id).not.toBe(live.current_version_id);

    const copy = await resend.templates.duplicate(id);
    expect(copy.data).toEqual({ object: 'template', id: expect.any(String) });
    expect((await resend.templates.get(copy.data!.id)).data).toMatchObject({
      name: 'order-confirmation (copy)',
      alias: null,
      status: 'draft',
      html: '<p>v2 {{{PRODUCT}}}</p>',
    });

    // create(...).publish() chains, as the SDK offers.
    const chained = await resend.templates.create({ name: 'welcome', html: '<p>Hi</p>' }).publish();
    expect(chained.data).toEqual({ object: 'template', id: expect.any(String) });

    const list = await resend.templates.list({ limit: 2 });
    expect(list.data).toMatchObject({ object: 'list', has_more: true });
    expect(list.data!.data.map((t) => t.id)).toEqual([chained.data!.id, copy.data!.id]);
    expect(list.data!.data[0]).toEqual({
      id: chained.data!.id,
      name: 'welcome',
      alias: null,
      status: 'published',
      published_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const next = await resend.templates.list({ limit: 2, after: copy.data!.id });
    expect(next.data).toMatchObject({ has_more: false, data: [{ id }] });

    expect((await resend.templates.remove('order-confirmation')).data).toEqual({
      object: 'template',
      id,
      deleted: true,
    });
    expect((await resend.templates.get(id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    expect((await resend.templates.remove(id)).error).toMatchObject({ name: 'not_found' });
  });

  it('emails.send and batch.send with a template render the published version', async () => {
    const { resend, stored } = await client();
    const { data } = await resend.templates.create({
      name: 'receipt',
      alias: 'receipt',
      subject: 'Receipt',
      html: '<p>{{{PRODUCT}}} costs {{{PRICE}}}</p><a href="{{{UNSUBSCRIBE_URL}}}">stop</a>',
      text: '{{{PRODUCT}}}: {{{PRICE}}}',
      variables: [
        { key: 'PRODUCT', type: 'string', fallbackValue: 'item' },
        { key: 'PRICE', type: 'number' },
      ],
    });
    await resend.templates.publish(data!.id);
    // A later draft edit does not reach sends until it is published.
    await resend.templates.update('receipt', { html: '<p>draft {{{PRODUCT}}}</p>' });

    const sent = await resend.emails.send({
      ...send,
      template: { id: 'receipt', variables: { PRODUCT: '<Mac & "Co">', PRICE: 499 } },
    });
    expect(sent.error).toBeNull();
    const email = await stored(sent.data!.id);
    expect(email.subject).toBe('Your order');
    expect(email.html).toBe(
      '<p>&lt;Mac &amp; &quot;Co&quot;&gt; costs 499</p><a href="https://mail.example.com/preferences/' +
        email.html!.split('/preferences/')[1],
    );
    expect(email.html).not.toContain('{{{');
    expect(email.text).toBe('<Mac & "Co">: 499');

    const batch = await resend.batch.send([
      { ...send, template: { id: data!.id, variables: { PRICE: 1 } } },
      { ...send, to: 'bob@example.com', template: { id: 'receipt', variables: { PRODUCT: 'Pen', PRICE: 2 } } },
    ]);
    expect(batch.error).toBeNull();
    const [first, second] = await Promise.all(batch.data!.data.map((d) => stored(d.id)));
    expect(first!.text).toBe('item: 1');
    expect(second!.text).toBe('Pen: 2');

    await resend.templates.publish('receipt');
    const again = await resend.emails.send({ ...send, template: { id: 'receipt', variables: { PRICE: 3 } } });
    expect((await stored(again.data!.id)).html).toBe('<p>draft item</p>');
  });

  it("takes the template's subject, rendered, when the send gives none (Resend's own example)", async () => {
    const { resend, token, stored } = await client();
    await resend.templates
      .create({
        name: 'o',
        alias: 'order',
        subject: 'Order {{{ORDER}}} for {{{NAME|you}}}',
        html: '<p>{{{ORDER}}}</p>',
      })
      .publish();
    await resend.templates.create({ name: 'n', alias: 'no-subject', html: '<p>x</p>' }).publish();
    const sent = await resend.emails.send({
      from: send.from,
      to: send.to,
      template: { id: 'order', variables: { ORDER: 42 } },
    });
    expect(sent.error).toBeNull();
    expect((await stored(sent.data!.id)).subject).toBe('Order 42 for you');
    const missing = await app.request('POST', '/emails', {
      token,
      body: { from: send.from, to: send.to, template: { id: 'no-subject' } },
    });
    expect(missing.body).toEqual({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'Missing `subject` field.',
    });
    const plain = await app.request('POST', '/emails', {
      token,
      body: { from: send.from, to: send.to, html: '<p>x</p>' },
    });
    expect(plain.body).toEqual({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'Missing `subject` field.',
    });
    const batch = await app.request('POST', '/emails/batch', {
      token,
      body: [
        { from: send.from, to: send.to, template: { id: 'order', variables: { ORDER: 1 } } },
        { from: send.from, to: send.to, text: 'x' },
      ],
    });
    expect(batch.body).toEqual({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'Missing `1.subject` field.',
    });
  });
});

describe('template input', () => {
  it('refuses from, reply_to and variable values (which cannot be stored), bad variables and bad aliases, and stores nothing', async () => {
    const { token, countTemplates } = await client();
    const base = { name: 'n', html: '<p>x</p>' };
    const cases: [unknown, string][] = [
      [{ ...base, from: 'a@acme.test' }, 'from: cannot be stored on a template: give `from` in each send'],
      [
        { ...base, reply_to: ['a@acme.test'] },
        'reply_to: cannot be stored on a template: give `reply_to` in each send',
      ],
      [
        { ...base, variables: { NAME: 'Ann' } },
        'variables: cannot store values on a template: declare an array of {key, type, fallback_value}, and give values in `template.variables` when sending',
      ],
      [{ ...base, variables: [{ key: 'A', type: 'boolean' }] }, 'variables.0.type: must be string or number'],
      [
        { ...base, variables: [{ key: 'A', type: 'number', fallback_value: 'ten' }] },
        "variables.0: fallback_value: must have the variable's type",
      ],
      [
        { ...base, variables: [{ key: 'FIRST_NAME', type: 'string' }] },
        'variables.0.key: is reserved (FIRST_NAME, LAST_NAME, EMAIL, UNSUBSCRIBE_URL, ALT_UNSUBSCRIBE_URL, contact, this)',
      ],
      [
        {
          ...base,
          variables: [
            { key: 'A', type: 'string' },
            { key: 'A', type: 'number' },
          ],
        },
        'variables: must not declare a key twice',
      ],
      [
        { ...base, variables: [{ key: '1A', type: 'string' }] },
        'variables.0.key: must be 1 to 50 letters, digits and underscores, not starting with a digit',
      ],
      [{ ...base, alias: 'has space' }, 'alias: must be 1 to 128 letters, digits, `.`, `_`, `~` or `-`'],
      [
        { ...base, alias: '0b0a4c4e-7f5b-4f6e-9a51-1c2d3e4f5a6b' },
        'alias: must not look like a UUID (ids and aliases share the path)',
      ],
      [{ ...base, html: '' }, 'html: must not be empty'],
      [{ name: 'n' }, 'Missing `html` field.'],
      [{ ...base, react: '<x/>' }, 'react: is not a supported field'],
    ];
    for (const [body, message] of cases) {
      const res = await app.request('POST', '/templates', { token, body });
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message });
    }
    expect(await countTemplates()).toBe(0);

    const { body: made } = await app.request('POST', '/templates', { token, body: { ...base, alias: 'taken' } });
    const taken = await app.request('POST', '/templates', { token, body: { ...base, alias: 'taken' } });
    expect(taken.body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'alias: another template already uses "taken"',
    });
    const patched = await app.request('PATCH', `/templates/${made.id}`, {
      token,
      body: { from: 'a@acme.test', name: 'changed' },
    });
    expect(patched.status).toBe(422);
    expect((await app.request('GET', '/templates/taken', { token })).body.name).toBe('n');
    expect(await countTemplates()).toBe(1);
  });

  it('finds an alias sent encodeURIComponent-ed, and publish and duplicate take an empty body', async () => {
    const { token } = await client();
    const { body: made } = await app.request('POST', '/templates', {
      token,
      body: { name: 'n', html: 'x', alias: 'a.b~c' },
    });
    expect((await app.request('GET', `/templates/${encodeURIComponent('a.b~c')}`, { token })).body.id).toBe(made.id);
    expect((await app.request('GET', '/templates/a%2Eb%7Ec', { token })).body.id).toBe(made.id);
    for (const action of ['publish', 'duplicate']) {
      const res = await app.request('POST', `/templates/a.b~c/${action}`, {
        token,
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
    }
  });

  it("keeps teams apart: another team's template answers 404 and cannot be sent with", async () => {
    const mine = await client();
    const theirs = await client();
    const { data } = await theirs.resend.templates.create({ name: 'secret', alias: 'secret', html: '<p>{{{X}}}</p>' });
    await theirs.resend.templates.publish(data!.id);
    for (const ref of [data!.id, 'secret']) {
      expect((await mine.resend.templates.get(ref)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      for (const [method, path] of [
        ['PATCH', `/templates/${ref}`],
        ['DELETE', `/templates/${ref}`],
        ['POST', `/templates/${ref}/publish`],
        ['POST', `/templates/${ref}/duplicate`],
      ] as const) {
        const res = await app.request(method, path, {
          token: mine.token,
          body: method === 'PATCH' ? { name: 'mine now' } : undefined,
        });
        expect(res.status).toBe(404);
      }
      const sent = await app.request('POST', '/emails', {
        token: mine.token,
        body: { ...send, template: { id: ref, variables: { X: 1 } } },
      });
      expect(sent.body).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: `template.id: no template with id ${JSON.stringify(ref)}`,
      });
    }
    expect((await mine.resend.templates.list()).data?.data).toEqual([]);
    expect((await theirs.resend.templates.get('secret')).data?.name).toBe('secret');
    expect(await mine.countEmails()).toBe(0);
  });
});

describe('sending with a template', () => {
  it("a sending-only key sends with its team's templates but cannot manage them", async () => {
    const { token, teamId } = await app.createTeamWithKey('sending_access');
    await app.run(async () => {
      const made = await createTemplate(app.deps, teamId, {
        name: 'n',
        html: 'Hi {{{NAME}}}',
        alias: 'hi',
        subject: null,
        text: null,
        variables: [],
      });
      await publishTemplate(app.deps, teamId, made.id);
    });
    for (const [method, path] of [
      ['GET', '/templates'],
      ['POST', '/templates'],
      ['GET', '/templates/hi'],
      ['POST', '/templates/hi/publish'],
    ] as const) {
      const res = await app.request(method, path, { token, body: method === 'POST' ? {} : undefined });
      expect({ path, status: res.status, name: res.body.name }).toEqual({
        path,
        status: 403,
        name: 'restricted_api_key',
      });
    }
    const sent = await app.request('POST', '/emails', {
      token,
      body: { ...send, template: { id: 'hi', variables: { NAME: 'Ann' } } },
    });
    expect(sent.status).toBe(200);
    expect((await app.run(() => app.deps.orm.em.findOneOrFail(Email, sent.body.id))).html).toBe('Hi Ann');
  });

  it('refuses drafts, missing values, wrong types and a body of its own, and writes nothing', async () => {
    const { token, resend, countEmails } = await client();
    await resend.templates.create({ name: 'draft', alias: 'draft', html: 'x' });
    const { data } = await resend.templates.create({
      name: 'live',
      alias: 'live',
      html: '{{{NAME}}} {{{AGE}}}',
      variables: [{ key: 'AGE', type: 'number' }],
    });
    await resend.templates.publish(data!.id);
    const cases: [unknown, string][] = [
      [
        { ...send, template: { id: 'draft' } },
        'template.id: template "draft" is a draft; publish it before sending with it',
      ],
      [
        { ...send, template: { id: 'live', variables: { AGE: 3 } } },
        'template.variables: no value and no fallback for `NAME`',
      ],
      [{ ...send, template: { id: 'live' } }, 'template.variables: no value and no fallback for `AGE`, `NAME`'],
      [
        { ...send, template: { id: 'live', variables: { NAME: 'Ann', AGE: 'three' } } },
        'template.variables.AGE: must be a number, as the template declares',
      ],
      [
        { ...send, html: '<p>mine</p>', template: { id: 'live', variables: { NAME: 'Ann', AGE: 3 } } },
        'html, text: cannot be sent with a template, which gives the body',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await app.request('POST', '/emails', { token, body });
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 422, message });
    }
    // Strict batch: one bad email refuses all, named by index; permissive keeps the good one.
    const batch = [
      { ...send, template: { id: 'live', variables: { NAME: 'Ann', AGE: 3 } } },
      { ...send, template: { id: 'live' } },
    ];
    const strict = await app.request('POST', '/emails/batch', { token, body: batch });
    expect(strict.body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: '1: template.variables: no value and no fallback for `AGE`, `NAME`',
    });
    expect(await countEmails()).toBe(0);
    const permissive = await app.request('POST', '/emails/batch', {
      token,
      body: batch,
      headers: { 'x-batch-validation': 'permissive' },
    });
    expect(permissive.body).toEqual({
      data: [{ id: expect.any(String) }],
      errors: [{ index: 1, message: 'template.variables: no value and no fallback for `AGE`, `NAME`' }],
    });
    expect(await countEmails()).toBe(1);
  });
});
