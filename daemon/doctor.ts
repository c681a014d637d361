// Placeholder until issue 5 lands.
export async function runDoctor(_argv: string[]): Promise<number> {
  process.stderr.write('doctor: not built yet\n');
  return 1;
}
