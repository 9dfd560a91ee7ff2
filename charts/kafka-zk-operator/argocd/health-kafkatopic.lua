-- Argo CD health check for kafka.zk-operator.io/KafkaTopic (kafka-zk-operator).
-- Install: argocd-cm key resource.customizations.health.kafka.zk-operator.io_KafkaTopic
-- (see docs/argocd.md). Tested with a real Lua runtime in tests/unit/test_argocd_health.py.
--
-- It follows the kstatus conditions the operator writes (docs/conditions.md):
-- Stalled=True is Degraded, Reconciling=True is Progressing, as for Flux and kubectl wait.
--
--   Suspended    ReconciliationPaused=True (annotation kafka.zk-operator.io/paused: "true")
--   Healthy      Ready=True and status.observedGeneration == metadata.generation;
--                also Unmanaged=True (annotation kafka.zk-operator.io/managed: "false")
--   Degraded     Stalled=True (a failure that needs a person: InvalidSpec, NotSupported,
--                ResourceConflict, TopicDeletedInKafka, a malformed znode, InternalError); for a
--                status without Stalled/Reconciling (written by an operator before them):
--                Ready=False with a reason not known to be transient (an unknown reason is never
--                reported as "still working")
--   Progressing  no status yet, observedGeneration missing or behind metadata.generation,
--                Reconciling=True (the operator retries by itself), no Ready condition,
--                Ready=Unknown, Ready=False with a transient reason and no Stalled/Reconciling
--                (ClusterUnavailable, ZooKeeperError, ReassignmentInProgress, TopicBeingDeleted,
--                ReplicationFactorChanging, PlanJobFailed, KRaftMigration),
--                or the resource is being deleted
local TRANSIENT_REASONS = {
  ClusterUnavailable = true,
  ZooKeeperError = true,
  ReassignmentInProgress = true,
  TopicBeingDeleted = true,
  ReplicationFactorChanging = true,
  PlanJobFailed = true,
  KRaftMigration = true,
}

local function find_condition(status, kind)
  if status == nil or type(status.conditions) ~= "table" then
    return nil
  end
  for _, condition in ipairs(status.conditions) do
    if condition.type == kind then
      return condition
    end
  end
  return nil
end

local function describe(condition, fallback)
  local text = condition.message
  if text == nil or text == "" then
    text = fallback
  end
  if condition.reason ~= nil and condition.reason ~= "" then
    return condition.reason .. ": " .. text
  end
  return text
end

hs = {}
local metadata = obj.metadata or {}
local status = obj.status
local generation = metadata.generation

if metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Being deleted: waiting for the operator to remove its finalizer"
  return hs
end

if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report a status"
  return hs
end

local paused = find_condition(status, "ReconciliationPaused")
if paused ~= nil and paused.status == "True" then
  hs.status = "Suspended"
  hs.message = describe(paused, "Reconciliation is paused")
  return hs
end

local unmanaged = find_condition(status, "Unmanaged")
if unmanaged ~= nil and unmanaged.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(unmanaged, "The operator no longer manages this topic")
  return hs
end

if status.observedGeneration == nil or (generation ~= nil and status.observedGeneration ~= generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile generation " .. tostring(generation)
    .. " (status describes generation " .. tostring(status.observedGeneration) .. ")"
  return hs
end

local ready = find_condition(status, "Ready")
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
  return hs
end

if ready.observedGeneration ~= nil and generation ~= nil and ready.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile generation " .. tostring(generation)
    .. " (Ready describes generation " .. tostring(ready.observedGeneration) .. ")"
  return hs
end

local stalled = find_condition(status, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled, "Topic is stalled: it needs a person")
  return hs
end

local reconciling = find_condition(status, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = describe(reconciling, "The operator is reconciling the topic")
  return hs
end

if ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready, "Topic is in sync")
  local warning = find_condition(status, "Warning")
  if warning ~= nil and warning.status == "True" and warning.message ~= nil then
    hs.message = hs.message .. " Warning: " .. warning.message
  end
  return hs
end

if ready.status == "False" then
  if TRANSIENT_REASONS[ready.reason or ""] then
    hs.status = "Progressing"
  else
    hs.status = "Degraded"
  end
  hs.message = describe(ready, "Topic is not ready")
  return hs
end

hs.status = "Progressing"
hs.message = describe(ready, "Readiness is not known yet")
return hs
