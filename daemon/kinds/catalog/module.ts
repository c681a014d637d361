/** The catalog as registered (kinds/index.ts): `run_command_wait` over the config's commands. */
import type { KindModule } from '../../tool-kind/index.js';
import { Catalog } from './catalog.js';
import { CatalogExecutor } from './executor.js';
import { catalogKind } from './kind.js';
import { CatalogSource } from './source.js';

export const catalog: KindModule = {
  kind: catalogKind,
  source({ config, confiner }) {
    const commands = new Catalog(config);
    return new CatalogSource(commands, new CatalogExecutor(commands, config.output_limit_bytes, confiner));
  },
};
