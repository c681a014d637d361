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

  it('a value that is not true or false is named', () => {
    const r = parse({ require_passkey: 'yes' });
    expect(describeZodError(r.error!)).toBe('require_passkey: must be true or false');
    const c = parse({ commands: { vault: { ...mark, require_passkey: 1 } } });
    expect(describeZodError(c.error!)).toBe('commands.vault.require_passkey: must be true or false');
  });
});
