{{/* Name of the chart, overridable. */}}
{{- define "kzo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name of the release's objects. */}}
{{- define "kzo.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kzo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kzo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kzo.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kzo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: kafka-zk-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kzo.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kzo.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the clusters file. */}}
{{- define "kzo.clustersSecretName" -}}
{{- if .Values.clusters.existingSecret -}}
{{- .Values.clusters.existingSecret -}}
{{- else -}}
{{- printf "%s-clusters" (include "kzo.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kzo.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* What the operator's settings are read from, shared by the Deployment and the helm test pod:
environment (the clusters file, the watched namespaces, krb5.conf, operator.extraEnv), mounts and
volumes (the clusters Secret, Kerberos, extraVolumes). */}}
{{- define "kzo.configEnv" -}}
- name: KZO_CLUSTERS_FILE
  value: {{ printf "/etc/kzo/%s" .Values.clusters.secretKey | quote }}
- name: KZO_NAMESPACES
  value: {{ join "," .Values.watchNamespaces | quote }}
{{- end -}}

{{- define "kzo.extraConfigEnv" -}}
{{- if or .Values.kerberos.krb5ConfigMap .Values.kerberos.krb5Conf }}
- name: KRB5_CONFIG
  value: /etc/kzo-krb5-conf/krb5.conf
{{- end }}
{{- with .Values.operator.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "kzo.configVolumeMounts" -}}
- name: clusters
  mountPath: /etc/kzo
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if .Values.kerberos.keytabSecret }}
- name: krb5-keytab
  mountPath: /etc/kzo-krb5
  readOnly: true
{{- end }}
{{- if or .Values.kerberos.krb5ConfigMap .Values.kerberos.krb5Conf }}
- name: krb5-conf
  mountPath: /etc/kzo-krb5-conf
  readOnly: true
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "kzo.configVolumes" -}}
- name: clusters
  secret:
    secretName: {{ include "kzo.clustersSecretName" . }}
    defaultMode: 0440
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if .Values.kerberos.keytabSecret }}
- name: krb5-keytab
  secret:
    secretName: {{ .Values.kerberos.keytabSecret }}
    defaultMode: 0440
{{- end }}
{{- if or .Values.kerberos.krb5ConfigMap .Values.kerberos.krb5Conf }}
- name: krb5-conf
  configMap:
    name: {{ include "kzo.krb5ConfigMapName" . }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Fail early on combinations the schema cannot express clearly. */}}
{{/* The ConfigMap holding krb5.conf: kerberos.krb5ConfigMap, else the one rendered from kerberos.krb5Conf. */}}
{{- define "kzo.krb5ConfigMapName" -}}
{{- .Values.kerberos.krb5ConfigMap | default (printf "%s-krb5" (include "kzo.fullname" .)) -}}
{{- end -}}

{{- define "kzo.validate" -}}
{{- if and (eq .Values.rbac.scope "namespaced") (empty .Values.watchNamespaces) -}}
{{- fail "rbac.scope=namespaced needs watchNamespaces: the namespaces to create Roles in and to watch" -}}
{{- end -}}
{{- if and (not .Values.clusters.existingSecret) (empty .Values.clusters.config.clusters) -}}
{{- fail "set clusters.existingSecret, or list at least one cluster in clusters.config.clusters" -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled" -}}
{{- end -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs leaderElection.enabled=true: without it every replica would reconcile the same resources" -}}
{{- end -}}
{{- end -}}

{{/* Rules the operator needs in every namespace it watches. */}}
{{- define "kzo.namespacedRules" -}}
- apiGroups: ["kafka.zk-operator.io"]
  resources: ["kafkatopics", "partitionreassignments"]
  verbs: ["get", "list", "watch", "patch", "update"]
- apiGroups: ["kafka.zk-operator.io"]
  resources: ["partitionreassignments"]
  # a KafkaTopic hands a replication-factor change to a PartitionReassignment it owns
  verbs: ["create"]
- apiGroups: ["kafka.zk-operator.io"]
  resources: ["kafkatopics/status", "partitionreassignments/status"]
  verbs: ["get", "patch", "update"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
# Reassignment plans longer than the status can hold live in ConfigMaps the resource owns.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
{{- end -}}
