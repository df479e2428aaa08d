/**
 * `McpInstrumentation`: the host of the in-process instrumentation, an OpenTelemetry
 * `InstrumentationBase` (what `registerInstrumentations` takes). It applies each front end's patch
 * table when the SDK loads (CommonJS and ESM; v1 by file, v2 from each package's exports), or by
 * hand with `instrument(...)` for code load hooks cannot see (bundled with esbuild, serverless),
 * and removes every patch on `disable()`.
 */
import {
  InstrumentationBase,
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
  isWrapped,
} from '@opentelemetry/instrumentation';
import { Hook as RequireHook } from 'require-in-the-middle';
import { loadSettings, type McpInstrumentationConfig, type Settings } from './config.js';
import { SDK1, SDK1_CJS_FILES, SDK1_ESM_FILES, SDK1_PACKAGE, SDK1_VERSIONS, supportedSdk1 } from './frontends/sdk1.js';
import { SDK2, SDK2_PACKAGES, SDK2_VERSIONS } from './frontends/sdk2.js';
import {
  LOGICAL_CALLS,
  clientOf,
  patchClient,
  patchProtocol,
  patchedMethods,
  protocolOf,
  type ProtocolShape,
} from './frontends/protocol.js';
import { field } from './fields.js';
import { CallMetrics } from './metrics.js';
import { importedFirst, loadedCommonJs } from './preloaded.js';
import { reportOnce } from './safety.js';
import { INSTRUMENTATION_SCOPE } from './semconv.js';
import { Sides } from './sides.js';
import { VERSION } from './version.js';

/** A prototype patched: a `Protocol` (of a shape) or a `Client` (its logical calls). */
interface Patched {
  readonly shape?: ProtocolShape;
  readonly methods: readonly string[];
}

// The CommonJS files the load hooks patch (the ends of their paths): v1's by name, v2's packages'
// `require` builds.
const CJS_FILES = [
  ...SDK1_CJS_FILES.map((file) => `/${SDK1_PACKAGE}/${file}`),
  ...SDK2_PACKAGES.map((name) => `/${name}/dist/index.cjs`),
];

export class McpInstrumentation extends InstrumentationBase<McpInstrumentationConfig> {
  // Made on first use: the base class's constructor asks for metric instruments before this
  // class's fields exist.
  private settingsValue?: Settings;
  private metricsValue?: CallMetrics;
  private sidesValue?: Sides;
  // Every prototype patched, however it was found: enable() and disable() patch and restore them
  // all (so the module definitions need no unpatch of their own).
  private readonly patched = new Map<object, Patched>();
  // v1's CommonJS files, hooked by name (set by `enable`, which the base constructor calls).
  declare private requireHook: RequireHook | undefined;
  // Whether the SDK modules loaded before the first `enable` were looked for (once).
  declare private preloadChecked: boolean | undefined;

  constructor(config: McpInstrumentationConfig = {}) {
    super(INSTRUMENTATION_SCOPE, VERSION, config);
  }

  override setConfig(config: McpInstrumentationConfig = {}): void {
    super.setConfig(config);
    this.settingsValue = undefined;
    this.metricsValue = undefined;
  }

  protected override _updateMetricInstruments(): void {
    this.metricsValue = undefined; // a new meter provider: instruments made anew on next use
  }

  private get settings(): Settings {
    return (this.settingsValue ??= loadSettings(this.getConfig()));
  }

  private get sides(): Sides {
    return (this.sidesValue ??= new Sides(
      () => this.tracer,
      () => (this.metricsValue ??= new CallMetrics(this.meter, this.settings)),
      () => this.settings,
    ));
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    // v1's ESM files through import-in-the-middle, which names a package's files after the
    // package; its CommonJS copies by our own require hook (`enable`).
    const esmFiles = SDK1_ESM_FILES.map(
      (file) =>
        new InstrumentationNodeModuleFile(
          `${SDK1_PACKAGE}/${file}`,
          SDK1_VERSIONS,
          (exports: unknown) => this.patchModule(exports, SDK1),
          () => undefined,
        ),
    );
    return [
      new InstrumentationNodeModuleDefinition(SDK1_PACKAGE, SDK1_VERSIONS, undefined, undefined, esmFiles),
      ...SDK2_PACKAGES.map(
        (name) =>
          new InstrumentationNodeModuleDefinition(
            name,
            SDK2_VERSIONS,
            (exports: unknown) => this.patchModule(exports, SDK2),
            () => undefined,
          ),
      ),
    ];
  }

  override enable(): void {
    super.enable();
    // The base class's require hook asks Node to resolve a package's main module before it looks
    // at its files, and 1.32.2's does not resolve: its CommonJS files are hooked by their full
    // names instead (require-in-the-middle names them without `/index` and `.js`), which it
    // matches without resolving anything.
    const names = SDK1_CJS_FILES.map((file) => `${SDK1_PACKAGE}/${file.replace(/(\/index)?(\.js)?$/, '')}`);
    this.requireHook ??= new RequireHook(names, { internals: true }, (exports, _name, baseDir) => {
      if (this.isEnabled() && supportedSdk1(baseDir)) this.patchModule(exports, SDK1);
      return exports;
    });
    for (const [prototype, patched] of this.patched ?? []) this.patch(prototype, patched);
    this.sidesValue?.transports.watchAll();
    if (!this.preloadChecked) {
      this.preloadChecked = true;
      // Said once the caller's synchronous code is done: a diagnostic logger it sets up just after
      // making the instrumentation (an SDK given `OTEL_LOG_LEVEL`) gets the warning.
      const stack = new Error().stack;
      queueMicrotask(() => { this.warnOnPreloaded(stack); });
    }
  }

  /**
   * Say once, through the diagnostic logger, which MCP SDK module was loaded before this
   * instrumentation and so is not instrumented (one the load hooks patched anyway is not said).
   */
  private warnOnPreloaded(stack: string | undefined): void {
    try {
      if (this.patched.size > 0) return;
      const fix = 'make and register McpInstrumentation in a file loaded before the application: node --import ./telemetry.mjs app.mjs (ES modules) or require it first (CommonJS); see docs/typescript.md, "In code"';
      for (const name of loadedCommonJs(CJS_FILES)) {
        this._diag.warn(`Module ${name} has been loaded before ${this.instrumentationName} so it is not instrumented: ${fix}`);
      }
      const esm = importedFirst(stack);
      if (esm !== undefined) {
        this._diag.warn(
          `${esm.specifiers.length > 1 ? 'Modules' : 'Module'} ${esm.specifiers.join(', ')} ${esm.specifiers.length > 1 ? 'have' : 'has'} been imported before ${this.instrumentationName} so it is not instrumented (the static imports of ${esm.module} run before its code): ${fix}`,
        );
      }
    } catch (error) {
      reportOnce('could not look for MCP SDK modules loaded first', error);
    }
  }

  override disable(): void {
    super.disable();
    for (const [prototype, { methods }] of this.patched ?? []) {
      for (const name of methods) {
        if (isWrapped((prototype as Record<string, unknown>)[name])) this._unwrap(prototype, name as never);
      }
    }
    this.sidesValue?.transports.restoreAll();
  }

  /**
   * Instrument the SDK's classes or objects given (a `Client`, `Server` or `McpServer` class or
   * instance, either generation), for code the load hooks cannot see. Returns how many were
   * recognised.
   */
  instrument(...targets: unknown[]): number {
    let found = 0;
    for (const target of targets) {
      // An McpServer holds its Server in `.server`.
      for (const candidate of [target, field(target, 'server')]) {
        const shape = [SDK2, SDK1].find((each) => protocolOf(candidate, each) !== undefined);
        if (shape === undefined) continue;
        this.patchClasses(candidate, shape);
        found++;
        break;
      }
    }
    return found;
  }

  /** Patch what a module of the SDK exports: its Protocol, and its Client's logical calls. */
  private patchModule<T>(exports: T, shape: ProtocolShape): T {
    let found = false;
    for (const name of ['Protocol', 'Client', 'Server']) found = this.patchClasses(field(exports, name), shape) || found;
    if (!found) reportOnce('an MCP SDK module exports no Protocol, Client or Server to patch');
    return exports;
  }

  /** Patch the Protocol (and Client) a class or an instance leads to; whether there was one. */
  private patchClasses(classOrInstance: unknown, shape: ProtocolShape): boolean {
    const protocol = protocolOf(classOrInstance, shape);
    if (protocol !== undefined) this.patch(protocol, { shape, methods: patchedMethods(shape) });
    const client = clientOf(classOrInstance);
    if (client !== undefined) this.patch(client, { methods: LOGICAL_CALLS });
    return protocol !== undefined || client !== undefined;
  }

  private patch(prototype: object, patched: Patched): void {
    this.patched.set(prototype, patched);
    const wrap = (target: object, name: string, wrapper: unknown): void => {
      if (!isWrapped((target as Record<string, unknown>)[name])) this._wrap(target as never, name as never, wrapper as never);
    };
    if (patched.shape !== undefined) patchProtocol(prototype, patched.shape, this.sides, wrap);
    else patchClient(prototype, this.sides, wrap);
  }
}
