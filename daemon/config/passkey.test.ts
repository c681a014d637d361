/**
 * `require_passkey` (contract 13.3) in the config: where it applies (`requiresPasskey`, which the rules of
 * contract 11 use at load to refuse an `allow` rule for such a command), a grant for such a command refused
 * at load, and a bad value named.
 */
import { describe, expect, it } from 'vitest';
import { describeZodError } from './fields.js';
import { fileSchema } from './file.js';
import { requiresPasskey } from './passkey.js';

const mark = { description: 'm', argv: ['true'] };

function parse(raw: Record<string, unknown>) {
  return fileSchema.safeParse(raw);
}

describe('require_passkey (contract 13.3)', () => {
  it('per catalog command, per upstream (every tool of it), or for everything', () => {
    const file = parse({
      commands: { vault: { ...mark, require_passkey: true }, mark },
      upstreams: { notes: { argv: ['x'], require_passkey: true }, web: { argv: ['y'] } },
    });
    expect(file.success).toBe(true);
    const c = file.data!;
    expect(requiresPasskey(c, 'vault')).toBe(true);
    expect(requiresPasskey(c, 'mark')).toBe(false);
    expect(requiresPasskey(c, 'notes__write_file')).toBe(true);
    expect(requiresPasskey(c, 'web__fetch')).toBe(false);
    expect(requiresPasskey(c, 'ogf.cue')).toBe(false);
    const all = parse({ require_passkey: true, commands: { mark } }).data!;
    expect(requiresPasskey(all, 'mark')).toBe(true);
    expect(requiresPasskey(all, 'ogf.cue')).toBe(true);
  });

  it('a config grant for a passkey-required command is refused at load, naming it', () => {
    const r = parse({
      commands: { vault: { ...mark, require_passkey: true } },
      grants: [{ command: 'vault' }],
    });
    expect(r.success).toBe(false);
    expect(describeZodError(r.error!)).toBe(
      'grants[0].command: vault needs a passkey for each approval (require_passkey), so it cannot be granted',
    );
    expect(parse({ require_passkey: true, commands: { mark }, grants: [{ command: 'mark' }] }).success).toBe(
      false,
    );
  });

  it('an allow rule for a passkey-required command is refused at load, naming the rule (contract 13.3)', () => {
    const allow = (when: string, id = 'let-it') => ({ id, when, decision: 'allow' });
    const everything = parse({
      require_passkey: true,
      commands: { mark },
      rules: [allow("command == 'mark'")],
    });
    expect(everything.success).toBe(false);
    expect(describeZodError(everything.error!)).toBe(
      'rules[0].decision: rule let-it: an allow rule cannot approve while require_passkey is true (every approval needs a passkey)',
    );
    const named = parse({
      commands: { vault: { ...mark, require_passkey: true }, mark },
      rules: [allow("command == 'mark'", 'fine'), allow("command == 'vault' && args.size() == 0")],
    });
    expect(named.success).toBe(false);
    expect(describeZodError(named.error!)).toBe(
      'rules[1].decision: rule let-it: vault needs a passkey for each approval (require_passkey), so no allow rule may name it',
    );
    const upstream = parse({
      upstreams: { notes: { argv: ['x'], require_passkey: true } },
      rules: [allow("upstream == 'notes'")],
    });
    expect(describeZodError(upstream.error!)).toContain('notes__* needs a passkey');
    // deny and ask rules may name it; an allow rule naming only other commands is fine.
    const fine = parse({
      commands: { vault: { ...mark, require_passkey: true }, mark },
      rules: [
        { id: 'no', when: "command == 'vault' && args.size() > 3", decision: 'deny' },
        { id: 'two', when: "command == 'vault'", decision: 'ask', approvals: 2 },
        allow("command == 'mark'"),
      ],
    });
    expect(fine.success).toBe(true);
  });

  it('a value that is not true or false is named', () => {
    const r = parse({ require_passkey: 'yes' });
    expect(describeZodError(r.error!)).toBe('require_passkey: must be true or false');
    const c = parse({ commands: { vault: { ...mark, require_passkey: 1 } } });
    expect(describeZodError(c.error!)).toBe('commands.vault.require_passkey: must be true or false');
  });
});
