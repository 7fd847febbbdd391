"""The package list, which pyproject.toml cannot state: ingest's packages, found, and ingest.dbt_project,
the dbt project itself (the checkout's root, mapped in pyproject.toml's package-dir, its files listed in
package-data), so that a wheel or `pip install .` runs every command."""
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        # the project's root holds this file, not modules of the package: its files are package data
        return [] if package == "ingest.dbt_project" else super().find_package_modules(package, package_dir)


setup(packages=[*find_packages(include=["ingest", "ingest.*"]), "ingest.dbt_project"], cmdclass={"build_py": BuildPy})
