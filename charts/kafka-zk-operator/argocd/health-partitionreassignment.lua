-- Argo CD health check for kafka.zk-operator.io/PartitionReassignment (kafka-zk-operator).
-- Install: argocd-cm key resource.customizations.health.kafka.zk-operator.io_PartitionReassignment
-- (see docs/argocd.md). Tested with a real Lua runtime in tests/unit/test_argocd_health.py.
--
--   Healthy      phase Completed
--   Degraded     phase Failed, or a phase this check does not know
--   Suspended    phase Stopped (stopped on request: nothing runs, nothing will run; delete the
--                resource or create a new one to continue), and phase ProposalReady waiting for
--                a person (no Reconciling=True condition; for a status written before the
--                ProposalReady condition existed: spec.approval Manual)
--   Progressing  no status or phase yet, observedGeneration missing or behind metadata.generation,
--                phases Pending, Queued and Running, ProposalReady with Reconciling=True (approved:
--                it runs by itself), or the resource is being deleted (throttles are being removed)
--
-- The phases match the kstatus conditions (docs/conditions.md): Failed and
-- Stopped carry Stalled=True (Flux and kubectl wait see an end), Completed Ready=True, and
-- Reconciling=True is written exactly in the phases reported Progressing here.
hs = {}
local metadata = obj.metadata or {}
local spec = obj.spec or {}
local status = obj.status
local generation = metadata.generation

local function find_condition(kind)
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

local function ready_message(fallback)
  if status ~= nil and status.message ~= nil and status.message ~= "" then
    return status.message
  end
  if status ~= nil and type(status.conditions) == "table" then
    for _, condition in ipairs(status.conditions) do
      if condition.type == "Ready" and condition.message ~= nil and condition.message ~= "" then
        return condition.message
      end
    end
  end
  return fallback
end

if metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Being deleted: waiting for the operator to remove throttles and its finalizer"
  return hs
end

if status == nil or status.phase == nil or status.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to compute a proposal"
  return hs
end

if status.observedGeneration == nil or (generation ~= nil and status.observedGeneration ~= generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
    .. " (status describes generation " .. tostring(status.observedGeneration) .. ")"
  return hs
end

local phase = status.phase

if phase == "Completed" then
  hs.status = "Healthy"
  hs.message = ready_message("Reassignment completed")
elseif phase == "Failed" then
  hs.status = "Degraded"
  hs.message = ready_message("Reassignment failed")
elseif phase == "Stopped" then
  hs.status = "Suspended"
  hs.message = ready_message("Reassignment stopped on request")
elseif phase == "ProposalReady" then
  local waits_for_person = spec.approval == "Manual"
  if find_condition("ProposalReady") ~= nil then
    local reconciling = find_condition("Reconciling")
    waits_for_person = reconciling == nil or reconciling.status ~= "True"
  end
  if waits_for_person then
    local proposal = status.proposal or {}
    local what = "The proposal"
    if proposal.id ~= nil then
      what = what .. " " .. proposal.id
    end
    if proposal.moves ~= nil then
      what = what .. " (" .. tostring(proposal.moves) .. " replica moves)"
    end
    hs.status = "Suspended"
    hs.message = what .. " waits for approval: kubectl annotate partitionreassignment "
      .. tostring(metadata.name) .. " -n " .. tostring(metadata.namespace)
      .. " kafka.zk-operator.io/approve=true"
  else
    hs.status = "Progressing"
    hs.message = ready_message("Proposal ready; it runs automatically (approval: Auto)")
  end
elseif phase == "Pending" or phase == "Queued" or phase == "Running" then
  hs.status = "Progressing"
  local text = ready_message(phase)
  if phase == "Running" and status.progressText ~= nil then
    text = text .. " (" .. status.progressText .. " partitions done)"
  end
  hs.message = text
else
  hs.status = "Degraded"
  hs.message = "Unknown phase " .. tostring(phase)
end
return hs
