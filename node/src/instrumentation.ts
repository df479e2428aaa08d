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
import { SDK1, SDK1_CJS_FILE, SDK1_ESM_FILE, SDK1_PACKAGE, SDK1_VERSIONS, supportedSdk1 } from './frontends/sdk1.js';
import { SDK2, SDK2_EXPORTS, SDK2_PACKAGES, SDK2_VERSIONS } from './frontends/sdk2.js';
import { patchProtocol, protocolOf, unpatchProtocol, type ProtocolShape } from './frontends/protocol.js';
import { field } from './fields.js';
import { CallMetrics } from './metrics.js';
import { reportOnce } from './safety.js';
import { INSTRUMENTATION_SCOPE } from './semconv.js';
import { Sides } from './sides.js';
import { VERSION } from './version.js';

export class McpInstrumentation extends InstrumentationBase<McpInstrumentationConfig> {
  // Both are made on first use: the base class's constructor asks for metric instruments before
  // this class's fields exist.
  private settingsValue?: Settings;
  private metricsValue?: CallMetrics;
  private sidesValue?: Sides;
  // Every Protocol prototype patched, and the shape it was patched as.
  private readonly patched = new Map<object, ProtocolShape>();
  // v1's CommonJS files, hooked by name (set by `enable`, which the base constructor calls).
  declare private requireHook: RequireHook | undefined;

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
    // v1's ESM copy of Protocol by its file (import-in-the-middle names a package's files after
    // the package); its CommonJS copy by our own require hook (`enable`).
    const esmFile = new InstrumentationNodeModuleFile(
      `${SDK1_PACKAGE}/${SDK1_ESM_FILE}`,
      SDK1_VERSIONS,
      (exports: Record<string, unknown>) => this.patchExports(exports, ['Protocol'], SDK1),
      () => undefined,
    );
    return [
      new InstrumentationNodeModuleDefinition(SDK1_PACKAGE, SDK1_VERSIONS, undefined, undefined, [esmFile]),
      ...SDK2_PACKAGES.map(
        (name) =>
          new InstrumentationNodeModuleDefinition(
            name,
            SDK2_VERSIONS,
            (exports: Record<string, unknown>) => this.patchExports(exports, SDK2_EXPORTS, SDK2),
            () => undefined,
          ),
      ),
    ];
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
        this.patchPrototype(protocolOf(candidate, shape) as object, shape);
        found++;
        break;
      }
    }
    return found;
  }

  override enable(): void {
    super.enable();
    // The base class's require hook asks Node to resolve a package's main module before it looks
    // at its files, and 1.32.2's does not resolve: the CommonJS copy of Protocol is hooked by its
    // full name instead (require-in-the-middle names it without its extension), which it matches
    // without resolving anything.
    this.requireHook ??= new RequireHook([`${SDK1_PACKAGE}/${SDK1_CJS_FILE.replace(/\.js$/, '')}`], { internals: true }, (exports, _name, baseDir) => {
      if (this.isEnabled() && supportedSdk1(baseDir)) this.patchExports(exports, ['Protocol'], SDK1);
      return exports;
    });
    for (const [prototype, shape] of this.patched ?? []) this.patchPrototype(prototype, shape);
  }

  override disable(): void {
    super.disable();
    for (const [prototype, shape] of this.patched ?? []) {
      unpatchProtocol(prototype, shape, (target, name) => { this._unwrap(target, name as never); });
    }
    this.sidesValue?.transports.restoreAll();
  }

  /** Patch the Protocol the first of `names` among `exports` leads to. */
  private patchExports<T>(exports: T, names: readonly string[], shape: ProtocolShape): T {
    const prototype = names.map((name) => protocolOf(field(exports, name), shape)).find((found) => found !== undefined);
    if (prototype === undefined) reportOnce(`the MCP SDK exports no ${names.join(' or ')} to patch`);
    else this.patchPrototype(prototype, shape);
    return exports;
  }

  private patchPrototype(prototype: object, shape: ProtocolShape): void {
    this.patched.set(prototype, shape);
    patchProtocol(prototype, shape, this.sides, (target, name, wrapper) => {
      const record = target as Record<string, unknown>;
      if (isWrapped(record[name])) return;
      this._wrap(record, name, wrapper as never);
    });
  }
}

