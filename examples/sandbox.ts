// The sandbox alone: a persistent Python kernel in a hardened container, the
// workspace copied in. Run: npx tsx examples/sandbox.ts workspace-examples/sales
import { createSandbox } from '../src/index.ts';

const workspaceDir = process.argv[2] ?? 'workspace-examples/sales';
await using session = await createSandbox({ workspaceDir, limits: { cellTimeoutMs: 30_000 } });
const result = await session.execute("import pandas as pd\ndf = pd.read_csv('orders.csv')\ndf.describe()");
console.log(result.status, result.value, result.figures.length);
