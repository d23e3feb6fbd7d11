# runpath.py: runs mainpkg/__main__.py through runpy.run_path as
# "__main__" and keeps the namespace it returns (`python runpath.py`).
import os
import runpy

ns = runpy.run_path(os.path.join(os.path.dirname(__file__), "mainpkg", "__main__.py"),
                    run_name="__main__")
