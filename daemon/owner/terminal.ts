// Placeholder until issue 4 lands.
export async function runOwnerCommand(sub: string, _argv: string[]): Promise<number> {
  process.stderr.write(`${sub}: not built yet\n`);
  return 1;
}
