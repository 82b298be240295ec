/**
 * The parts of Kubernetes objects the launcher writes and reads, in the API's own field names
 * (a subset of the OpenAPI schemas; tests/fakes/kube_validate.ts checks what is sent against the
 * full ones). Declared here rather than taken from `@kubernetes/client-node`, whose declarations
 * pull Node's type definitions into every program that imports this folder.
 */

/** `metadata` of an object. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: Date | string;
}

/** An owner of an object (its garbage collection follows the owner's). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** One variable of a container's environment. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

/** Requests and limits (`cpu`, `memory`, `ephemeral-storage`). */
export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** The one container of a worker pod. */
export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args: string[];
  env: EnvVar[];
  envFrom?: { secretRef: { name: string } }[];
  resources?: ResourceRequirements;
  securityContext: {
    allowPrivilegeEscalation: boolean;
    privileged: boolean;
    readOnlyRootFilesystem: boolean;
    runAsNonRoot: boolean;
    capabilities: { drop: string[] };
  };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}

/** A volume of a worker pod. */
export interface Volume {
  name: string;
  emptyDir?: Record<string, never>;
  secret?: {
    secretName: string;
    items?: { key: string; path: string }[];
    defaultMode?: number;
  };
}

/** A toleration of a worker pod. */
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/** A pod template's spec. */
export interface PodSpec {
  restartPolicy: "Never";
  automountServiceAccountToken: boolean;
  enableServiceLinks: boolean;
  serviceAccountName?: string;
  runtimeClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  terminationGracePeriodSeconds: number;
  securityContext: {
    runAsNonRoot: boolean;
    runAsUser: number;
    runAsGroup: number;
    fsGroup: number;
    seccompProfile: { type: string };
  };
  containers: Container[];
  volumes: Volume[];
}

/** A condition of a Job (`Complete`, `Failed`, …). */
export interface JobCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: Date | string;
}

/** A `batch/v1` Job: what the launcher creates, and what it reads back from a list. */
export interface Job {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: {
    backoffLimit: number;
    activeDeadlineSeconds: number;
    ttlSecondsAfterFinished: number;
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: PodSpec;
    };
  };
  status?: { conditions?: JobCondition[]; completionTime?: Date | string };
}

/** A pod, as read back from a list. */
export interface Pod {
  metadata?: ObjectMeta;
  status?: {
    phase?: string;
    reason?: string;
    containerStatuses?: {
      state?: {
        terminated?: { reason?: string; exitCode: number };
        waiting?: { reason?: string; message?: string };
      };
    }[];
  };
}
