/**
 * Offline validation of Kubernetes objects against the API's OpenAPI schemas, for the fake API
 * server and the deploy/ render test: `kubernetes-models` (types, required fields, enums and
 * formats, generated from the OpenAPI schemas; `@kubernetes-models/keda` for ScaledJob) plus a
 * strict walk for unknown fields, as the API server's `fieldValidation=Strict` (and
 * `kubectl apply --validate=strict`) refuses them, using the field lists of the same OpenAPI
 * schemas as `@kubernetes/client-node` generated them. KEDA's CRD fields are listed below by
 * hand from its models (the client has none); its `jobTargetRef` is walked as a JobSpec.
 */
import { loadClientNode } from "../../lib/kubernetes/client_node.js";
import { Job } from "kubernetes-models/batch/v1/Job";
import { Pod } from "kubernetes-models/v1/Pod";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ScaledJob } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledJob";
import { TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The client's generated models, for their field lists. */
const k8s = await loadClientNode();

interface Kind {
  /** The kubernetes-models class (its `validate()` throws with the failing paths). */
  model: new (data: Json) => { validate(): void };
  /** The client's generated model of the same schema: its fields, for the strict walk. */
  fields: string;
}

const KINDS: Record<string, Kind> = {
  "batch/v1/Job": { model: Job, fields: "V1Job" },
  "v1/Pod": { model: Pod, fields: "V1Pod" },
  "v1/Secret": { model: Secret, fields: "V1Secret" },
  "v1/Service": { model: Service, fields: "V1Service" },
  "v1/ServiceAccount": { model: ServiceAccount, fields: "V1ServiceAccount" },
  "v1/ConfigMap": { model: ConfigMap, fields: "V1ConfigMap" },
  "v1/PersistentVolumeClaim": { model: PersistentVolumeClaim, fields: "V1PersistentVolumeClaim" },
  "apps/v1/StatefulSet": { model: StatefulSet, fields: "V1StatefulSet" },
  "apps/v1/Deployment": { model: Deployment, fields: "V1Deployment" },
  "networking.k8s.io/v1/NetworkPolicy": { model: NetworkPolicy, fields: "V1NetworkPolicy" },
  "rbac.authorization.k8s.io/v1/Role": { model: Role, fields: "V1Role" },
  "rbac.authorization.k8s.io/v1/RoleBinding": { model: RoleBinding, fields: "V1RoleBinding" },
  "policy/v1/PodDisruptionBudget": { model: PodDisruptionBudget, fields: "V1PodDisruptionBudget" },
  "keda.sh/v1alpha1/ScaledJob": { model: ScaledJob, fields: "KedaScaledJob" },
  "keda.sh/v1alpha1/TriggerAuthentication": {
    model: TriggerAuthentication,
    fields: "KedaTriggerAuthentication",
  },
};

/**
 * KEDA's fields (from @kubernetes-models/keda's ScaledJob, ScaledJobSpec, ScaleTriggers,
 * TriggerAuthenticationSpec and AuthSecretTargetRef), in the client's attribute-map form.
 */
const KEDA: Record<string, Record<string, string>> = {
  KedaScaledJob: {
    apiVersion: "string",
    kind: "string",
    metadata: "V1ObjectMeta",
    spec: "KedaScaledJobSpec",
    status: "any",
  },
  KedaScaledJobSpec: {
    envSourceContainerName: "string",
    failedJobsHistoryLimit: "number",
    jobTargetRef: "V1JobSpec",
    maxReplicaCount: "number",
    minReplicaCount: "number",
    pollingInterval: "number",
    rollout: "any",
    rolloutStrategy: "string",
    scalingStrategy: "any",
    successfulJobsHistoryLimit: "number",
    triggers: "Array<KedaScaleTriggers>",
  },
  KedaScaleTriggers: {
    authenticationRef: "KedaAuthenticationRef",
    metadata: "{ [key: string]: string; }",
    metricType: "string",
    name: "string",
    type: "string",
    useCachedMetrics: "boolean",
  },
  KedaAuthenticationRef: { kind: "string", name: "string" },
  KedaTriggerAuthentication: {
    apiVersion: "string",
    kind: "string",
    metadata: "V1ObjectMeta",
    spec: "KedaTriggerAuthenticationSpec",
    status: "any",
  },
  KedaTriggerAuthenticationSpec: {
    secretTargetRef: "Array<KedaAuthSecretTargetRef>",
    env: "any",
    podIdentity: "any",
    hashiCorpVault: "any",
    azureKeyVault: "any",
    awsSecretManager: "any",
    gcpSecretManager: "any",
    boundServiceAccountToken: "any",
    configMapTargetRef: "any",
  },
  KedaAuthSecretTargetRef: { key: "string", name: "string", parameter: "string" },
};

/** The fields of model `type`, by wire name (undefined: not an object type). */
function fieldsOf(type: string): Map<string, string> | undefined {
  const keda = KEDA[type];
  if (keda) return new Map(Object.entries(keda));
  const model = (k8s as unknown as Record<string, Json>)[type];
  const map = model?.getAttributeTypeMap?.() as { baseName: string; type: string }[] | undefined;
  return map ? new Map(map.map((a) => [a.baseName, a.type])) : undefined;
}

/** Unknown fields of `value` read as `type`, each as its JSON path. */
export function unknownFields(value: Json, type: string, path = ""): string[] {
  if (value === null || value === undefined) return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    return Array.isArray(value)
      ? value.flatMap((v, i) => unknownFields(v, array[1], `${path}[${i}]`))
      : [];
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    return typeof value === "object"
      ? Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1], `${path}.${k}`))
      : [];
  }
  const fields = fieldsOf(type);
  if (!fields || typeof value !== "object" || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const t = fields.get(key);
    if (t === undefined) out.push(`${path ? `${path}.` : ""}${key}`);
    else out.push(...unknownFields(v, t, path ? `${path}.${key}` : key));
  }
  return out;
}

/** What is wrong with `object` by the OpenAPI schemas of its kind (empty: nothing). */
export function schemaErrors(object: Json): string[] {
  const key = `${object?.apiVersion}/${object?.kind}`;
  const kind = KINDS[key];
  if (!kind) return [`no schema here for ${key}`];
  const errors: string[] = [];
  try {
    new kind.model(structuredClone(object)).validate();
  } catch (e) {
    errors.push((e as Error).message);
  }
  for (const field of unknownFields(object, kind.fields)) {
    errors.push(`unknown field "${field}"`);
  }
  return errors;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** One reason the API server gives for refusing a field (a `Status` cause). */
export interface Cause {
  reason: "FieldValueInvalid" | "FieldValueRequired";
  message: string;
  field: string;
}

function invalid(field: string, value: string, why: string): Cause {
  return {
    reason: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
    field,
  };
}

/** The API server's own checks of labels (apimachinery's ValidateLabels). */
export function labelCauses(labels: Record<string, string> | undefined, field: string): Cause[] {
  const causes: Cause[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const slash = key.lastIndexOf("/");
    const prefix = slash < 0 ? "" : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    if (
      (prefix && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) || name.length > 63 ||
      !LABEL_NAME.test(name)
    ) {
      causes.push(invalid(
        field,
        key,
        "name part must consist of alphanumeric characters, " +
          "'-', '_' or '.', and must start and end with an alphanumeric character",
      ));
    }
    if (typeof value !== "string") {
      causes.push(invalid(field, String(value), "a label value must be a string"));
    } else if (value.length > 63) {
      causes.push(invalid(field, value, "must be no more than 63 bytes"));
    } else if (!LABEL_VALUE.test(value)) {
      causes.push(invalid(
        field,
        value,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', " +
          "'_' or '.', and must start and end with an alphanumeric character",
      ));
    }
  }
  return causes;
}

/** The API server's checks of an object's metadata on create (ValidateObjectMeta). */
export function metadataCauses(meta: Json): Cause[] {
  const causes: Cause[] = [];
  const name = meta?.name;
  if (!name) {
    causes.push({
      reason: "FieldValueRequired",
      message: "Required value: name or generateName is required",
      field: "metadata.name",
    });
  } else if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    causes.push(invalid(
      "metadata.name",
      name,
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " +
        "or '.', and must start and end with an alphanumeric character",
    ));
  }
  causes.push(...labelCauses(meta?.labels, "metadata.labels"));
  for (const [key] of Object.entries(meta?.annotations ?? {})) {
    const slash = key.lastIndexOf("/");
    const n = slash < 0 ? key : key.slice(slash + 1);
    if (n.length > 63 || !LABEL_NAME.test(n)) {
      causes.push(
        invalid("metadata.annotations", key, "name part must consist of alphanumeric characters"),
      );
    }
  }
  for (const [i, ref] of (meta?.ownerReferences ?? []).entries()) {
    const at = `metadata.ownerReferences[${i}]`;
    if (!ref?.uid) causes.push(invalid(`${at}.uid`, ref?.uid ?? "", "uid must not be empty"));
    if (!ref?.apiVersion) causes.push(invalid(`${at}.apiVersion`, "", "version must not be empty"));
    if (!ref?.kind) causes.push(invalid(`${at}.kind`, "", "kind must not be empty"));
    if (!ref?.name) causes.push(invalid(`${at}.name`, "", "name must not be empty"));
  }
  return causes;
}
