/** What the launcher uses of `@kubernetes/client-node` (its own declarations are not loaded). */
import type { Job, Pod } from "./k8s_types.ts";

/** A list answered by the API server. */
export interface ObjectList<T> {
  items: T[];
}

/** `BatchV1Api`: Jobs. */
export interface BatchApi {
  listNamespacedJob(p: { namespace: string; labelSelector?: string }): Promise<ObjectList<Job>>;
  createNamespacedJob(p: { namespace: string; body: Job }): Promise<Job>;
  deleteNamespacedJob(
    p: { name: string; namespace: string; propagationPolicy?: string },
  ): Promise<unknown>;
}

/** `CoreV1Api`: pods. */
export interface CoreApi {
  listNamespacedPod(p: { namespace: string; labelSelector?: string }): Promise<ObjectList<Pod>>;
  readNamespacedPod(p: { name: string; namespace: string }): Promise<Pod>;
}

/** `KubeConfig`: where the cluster is and who calls it. */
export interface KubeConfig {
  loadFromCluster(): void;
  loadFromFile(file: string): void;
  mergeConfig(other: KubeConfig): void;
  getCurrentContext(): string;
  getContextObject(name: string): { namespace?: string } | null;
  getCurrentCluster(): { server: string } | null;
  makeApiClient<T>(api: ApiClass<T>): T;
}

/** An API class the configuration makes clients of. */
export interface ApiClass<T> {
  readonly __api?: T;
}

/** The module: the configuration, the two API classes, and every generated model by name. */
export interface ClientNode {
  KubeConfig: new () => KubeConfig;
  BatchV1Api: ApiClass<BatchApi>;
  CoreV1Api: ApiClass<CoreApi>;
  /** Generated models (`V1JobSpec` …) with their OpenAPI field lists. */
  [model: string]: unknown;
}

/** Load the package. */
export function loadClientNode(): Promise<ClientNode>;
