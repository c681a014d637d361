/**
 * What the history-against-the-chain tests share (contract 14 (v4), issue 35 finding 6): a catalog whose
 * `deploy` a rule denies for prod, and whose `big` takes an argument the retention rule prunes.
 */

/** 6,002 bytes of JSON: an argument pruned 7 days after the command ended. */
export const LONG = 'é'.repeat(3000);

/** A catalog with `deploy` (a rule denies prod) and `big` (an argument the retention rule prunes). */
export function deployConfig(): Record<string, unknown> {
  return {
    commands: {
      deploy: {
        description: 'Deploy',
        argv: [process.execPath, '-e', 'process.stdout.write("deployed " + process.argv[1])', '{env}'],
        params: { env: { type: 'string', max_length: 20, pattern: '^[a-z]+$' } },
        timeout_s: 30,
      },
      big: {
        description: 'Takes a long text',
        argv: [process.execPath, '-e', 'process.stdout.write("ok")', '{tag}', '{text}'],
        params: {
          tag: { type: 'string', max_length: 20, pattern: '^[a-z]+$' },
          text: { type: 'string', max_length: 4096 },
        },
        timeout_s: 30,
      },
    },
    rules: [{ id: 'no-prod', when: "command == 'deploy' && args.env == 'prod'", decision: 'deny' }],
  };
}
