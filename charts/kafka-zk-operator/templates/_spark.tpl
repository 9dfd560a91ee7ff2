{{/* ServiceAccount of spark-submit, the driver and the executors. */}}
{{- define "kzo.spark.serviceAccountName" -}}
{{- if .Values.spark.serviceAccount.create -}}
{{- default (printf "%s-spark" (include "kzo.fullname" .) | trunc 63 | trimSuffix "-") .Values.spark.serviceAccount.name -}}
{{- else -}}
{{- required "spark.serviceAccount.name is required when spark.serviceAccount.create is false" .Values.spark.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image of the Spark job: spark.image, else "<image.repository>-spark@<spark.digest>", else
"<image.repository>-spark:<tag>". */}}
{{- define "kzo.spark.image" -}}
{{- if .Values.spark.image -}}
{{- .Values.spark.image -}}
{{- else if .Values.spark.digest -}}
{{- printf "%s-spark@%s" .Values.image.repository .Values.spark.digest -}}
{{- else -}}
{{- printf "%s-spark:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}
