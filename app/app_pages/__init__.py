"""Pages of the Streamlit app, registered by `app/streamlit_app.py` through `st.navigation`."""
