"""Run by ColdFront's own Python (its venv) after ``coldfront load_test_data``: the people and
allocations the tests need beyond ColdFront's test data, and an API token for each. Prints the
tokens as JSON. Not imported by fairtop or its tests.

ColdFront's test data: cgray is PI (and Manager) of "Angular momentum in QGP holography" with four
allocations; #4 (University Metered HPC) has ``slurm_account_name`` cgray-metered and Core Usage
(Hours) 150000. sfoster is PI of another project. Added here:

* on #4: XDMoD's usage 41234.5; ``slurm_specs`` GrpTRESMins=cpu={cpumin} with the attribute list
  that makes cpumin Core Usage x 60 (what ``slurm_dump`` expands); a private usage attribute.
* pmanager: Manager of cgray's project (not PI, not an allocation user).
* nobody: in no project.
* staffer: staff (not superuser), PI of a project whose allocation has private attributes.
* an Expired allocation of cgray's project (end date passed).
* a token made for "leaver" and then deleted (revoked).
"""

from __future__ import annotations

import datetime
import json

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from coldfront.core.allocation.models import (  # noqa: E402
    Allocation,
    AllocationAttribute,
    AllocationAttributeType,
    AllocationStatusChoice,
    AllocationUser,
    AllocationUserStatusChoice,
)
from coldfront.core.field_of_science.models import FieldOfScience  # noqa: E402
from coldfront.core.project.models import (  # noqa: E402
    Project,
    ProjectStatusChoice,
    ProjectUser,
    ProjectUserRoleChoice,
    ProjectUserStatusChoice,
)
from coldfront.core.resource.models import Resource  # noqa: E402


def attr(allocation: Allocation, name: str, value: str, usage: float | None = None) -> None:
    a = AllocationAttribute.objects.create(
        allocation_attribute_type=AllocationAttributeType.objects.get(name=name), allocation=allocation, value=value)
    if usage is not None:
        a.allocationattributeusage.value = usage
        a.allocationattributeusage.save()


def allocation(project: Project, resource: str, status: str, end: datetime.date, user: User) -> Allocation:
    a = Allocation.objects.create(project=project, status=AllocationStatusChoice.objects.get(name=status),
                                  start_date=end - datetime.timedelta(days=365), end_date=end,
                                  justification="fairtop tests")
    a.resources.add(Resource.objects.get(name=resource))
    AllocationUser.objects.create(allocation=a, user=user, status=AllocationUserStatusChoice.objects.get(name="Active"))
    return a


today = datetime.date.today()
cgray = User.objects.get(username="cgray")
qgp = Project.objects.get(pi=cgray)
metered = Allocation.objects.get(project=qgp, resources__name="University Metered HPC")
core = AllocationAttribute.objects.get(allocation=metered, allocation_attribute_type__name="Core Usage (Hours)")
core.allocationattributeusage.value = 41234.5
core.allocationattributeusage.save()
attr(metered, "slurm_specs", "GrpTRESMins=cpu={cpumin}")
attr(metered, "slurm_specs_attriblist", "cpumin := :Core Usage (Hours)\ncpumin |= 1\ncpumin *= 60")
attr(metered, "Paid Cloud Support (Hours)", "40", usage=12.5)

expired = allocation(qgp, "University HPC", "Expired", today - datetime.timedelta(days=30), cgray)
attr(expired, "slurm_account_name", "cgray-old")
attr(expired, "Core Usage (Hours)", "5000", usage=4999.5)

manager = User.objects.create(username="pmanager", first_name="Pat", last_name="Manager")
ProjectUser.objects.create(user=manager, project=qgp, role=ProjectUserRoleChoice.objects.get(name="Manager"),
                           status=ProjectUserStatusChoice.objects.get(name="Active"))
nobody = User.objects.create(username="nobody", first_name="No", last_name="Body")

staffer = User.objects.create(username="staffer", first_name="Sta", last_name="Ffer", is_staff=True)
ops = Project.objects.create(pi=staffer, title="Cluster operations", description="The staff's own tests.",
                             field_of_science=FieldOfScience.objects.get(description="Chemistry"),
                             status=ProjectStatusChoice.objects.get(name="Active"))
ProjectUser.objects.create(user=staffer, project=ops, role=ProjectUserRoleChoice.objects.get(name="Manager"),
                           status=ProjectUserStatusChoice.objects.get(name="Active"))
ops_alloc = allocation(ops, "University Metered HPC", "Active", today + datetime.timedelta(days=90), staffer)
attr(ops_alloc, "slurm_account_name", "ops")
attr(ops_alloc, "Core Usage (Hours)", "2000", usage=150.0)
attr(ops_alloc, "slurm_specs", "GrpTRESMins=cpu=120000")
attr(ops_alloc, "Paid Cloud Support (Hours)", "8", usage=2.0)

leaver = User.objects.create(username="leaver")
revoked = Token.objects.create(user=leaver).key
Token.objects.filter(user=leaver).delete()

tokens = {u: Token.objects.create(user=User.objects.get(username=u)).key
          for u in ("cgray", "sfoster", "pmanager", "nobody", "staffer")}
print(json.dumps({"tokens": tokens, "revoked": revoked}))
