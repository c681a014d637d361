// Placeholder until issue 3 lands.
export async function runMcpStdio(_argv: string[]): Promise<number> {
  process.stderr.write('mcp-stdio: not built yet\n');
  return 1;
}
