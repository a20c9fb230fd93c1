# The install room's public names, each once: the lazy loader in __init__.py
# reads this file, and type checkers read it as the package's interface.

from .completion import SHELLS as SHELLS
from .completion import completion_file as completion_file
from .completion import install_completion as install_completion
from .completion import uninstall_completion as uninstall_completion
from .doctor import Check as Check
from .doctor import DoctorReport as DoctorReport
from .doctor import doctor as doctor
from .hosts import HOSTS as HOSTS
from .hosts import Host as Host
from .hosts import running_program as running_program
from .manifests import ManifestFile as ManifestFile
from .manifests import repository_manifests as repository_manifests
from .plan import FileChange as FileChange
from .plan import InstallResult as InstallResult
from .plan import Plan as Plan
from .plan import apply_plan as apply_plan
from .plan import plan_install as plan_install
from .plan import plan_uninstall as plan_uninstall
