// The repository's LICENSE in the npm tarball: copied in by `prepack`, removed by `postpack`, so
// the package carries the one license text the repository has without a second copy to keep.
import { copyFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packaged = join(root, 'LICENSE');
if (process.argv[2] === 'copy') copyFileSync(join(root, '..', 'LICENSE'), packaged);
else rmSync(packaged, { force: true });
