/**
 * The catalog section (contract 1.3 `commands`): each command's argv template and typed params.
 */
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { compilePattern } from '../base/index.js';
import { intIn } from './fields.js';
import { entrySandboxSchema } from './sandbox.js';

/** A catalog command's name (contract 1.3). */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const PLACEHOLDER_RE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

const stringParam = z.strictObject({
  type: z.literal('string'),
  max_length: z.number().int().min(1).max(4096),
  // Anchored and compiled by RE2 (daemon/base/patterns.ts, contract 1.3 (v2)): what RE2 cannot compile is refused
  // here, naming the field, rather than at the first call.
  pattern: z
    .string()
    .superRefine((p, ctx) => {
      const compiled = compilePattern(p);
      if (!compiled.ok) ctx.addIssue({ code: 'custom', message: compiled.why });
    })
    .optional(),
  // Contract 1.3 (v2): values refuse control and bidi characters; true admits newline and tab, nothing else.
  // Absent means false (kept optional so catalog entries built in code need not spell it out).
  allow_newlines: z.boolean('must be true or false').optional(),
});
const integerParam = z
  .strictObject({ type: z.literal('integer'), min: z.number().int(), max: z.number().int() })
  .refine((p) => p.min <= p.max, 'min must not exceed max');
const enumParam = z.strictObject({
  type: z.literal('enum'),
  values: z.array(z.string().max(4096)).min(1).max(256),
});
const paramSchema = z.union([stringParam, integerParam, enumParam], {
  error:
    'must be {"type":"string","max_length":N,"pattern"?,"allow_newlines"?}, {"type":"integer","min":A,"max":B} or {"type":"enum","values":[...]}',
});
export type ParamSpec = z.infer<typeof paramSchema>;

export const commandSchema = z
  .strictObject({
    description: z.string().max(1000),
    argv: z.array(z.string().min(1, 'must be non-empty strings')).min(1, 'must name a program'),
    params: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'param names must be identifiers'), paramSchema)
      .default({}),
    cwd: z.string().refine(isAbsolute, 'must be an absolute path').optional(),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'names must be identifiers'), z.string())
      .optional(),
    timeout_s: z.number().int().min(1).max(3600).default(60),
    // Contract 1.3/9 (v2): how many distinct owners must approve each call (absent: 1).
    approvals: intIn(1, 5).optional(),
    // Contract 13.3 (v3): approving a call needs a passkey assertion from the approving owner.
    require_passkey: z.boolean('must be true or false').optional(),
    // Contract 21 (v4): what its process may touch (sandbox.ts); false: unconfined despite sandbox_default.
    sandbox: entrySandboxSchema.optional(),
  })
  .superRefine((cmd, ctx) => {
    cmd.argv.forEach((arg, i) => {
      const m = PLACEHOLDER_RE.exec(arg);
      if (m) {
        if (!(m[1]! in cmd.params)) {
          ctx.addIssue({
            code: 'custom',
            path: ['argv', i],
            message: `placeholder {${m[1]}} names no param`,
          });
        }
      } else if (arg.includes('{') && /\{[A-Za-z_][A-Za-z0-9_]*\}/.test(arg)) {
        ctx.addIssue({
          code: 'custom',
          path: ['argv', i],
          message: 'a placeholder must be a whole argv element, exactly {name}',
        });
      }
    });
    if (cmd.argv[0] !== undefined && PLACEHOLDER_RE.test(cmd.argv[0])) {
      ctx.addIssue({
        code: 'custom',
        path: ['argv', 0],
        message: 'the program must be a literal, not a placeholder',
      });
    }
  });
export type CatalogEntry = z.infer<typeof commandSchema>;
